// The design documents' numbers as presets: the inputs each document states (anything it does not
// state keeps feedlab's default and is listed as assumed), and the values it states for figures,
// with an erratum where the document's own inputs give something else.
// Each preset cites its document by title and language (the project's digests of them, with every
// number and the checked arithmetic, are outside the repository).
import type { Inputs } from './inputs.js';

export interface DocumentValue {
  /** The number to compare with ours; for a range, its middle. */
  value: number;
  /** A range the document gives ("460-700/s"): ours agrees when it falls inside. */
  low?: number;
  high?: number;
  /** As the document writes it, when that is not a plain number (a range, a rounded figure). */
  stated?: string;
  /** Where in the document, when it states the figure more than once ("Q2"). */
  where?: string;
  /** Why the document is wrong here; absent when the document's figure follows from its inputs. */
  erratum?: string;
}

export interface Preset {
  name: string;
  title: string;
  summary: string;
  /** The document by its own title (translated) and language: what a reader can look for, not a path of ours. */
  source: string;
  /** The inputs the document states. */
  inputs: Partial<Inputs>;
  documentValues: Record<string, DocumentValue | DocumentValue[]>;
  notes: string[];
}

export const PRESETS: readonly Preset[] = [
  {
    name: 'social-feed-chapter',
    title: 'Project: Social Feed (Bengali system-design chapter)',
    summary: '50M DAU, 10% post twice a day, 10 feed opens, 200 follows, 3x peak, 800-entry timelines at 24 B',
    source: '"প্রজেক্ট: সোশ্যাল ফিড" ("Project: Social Feed"), a chapter of a Bengali system-design course',
    inputs: {
      dau: 50e6,
      'posters.share': 0.1,
      'posts.perPoster': 2,
      'reads.perUser': 10,
      peakFactor: 3,
      'followers.avg': 200,
      'dormant.share': 0.65,
      'post.bytes': 400,
      'media.share': 0.3,
      'media.bytes': 300e3,
      'timeline.users': 20e6,
      'timeline.cap': 800,
      'timeline.entryBytes': 24,
      threshold: 50e3,
      'celebrity.followers': 50e6,
      'fleet.writesPerSecond': 23e3,
      'celebrities.followed': 12.5,
      'page.size': 20,
    },
    documentValues: {
      posts_per_day: { value: 10e6 },
      posts_per_second_avg: { value: 115, stated: '≈115/s' },
      posts_per_second_peak: { value: 350, stated: '≈350/s' },
      reads_per_day: { value: 500e6 },
      reads_per_second_avg: { value: 5800, stated: '≈5,800/s' },
      reads_per_second_peak: { value: 17000, stated: '≈17,000/s' },
      read_write_ratio: { value: 50, stated: '≈50:1' },
      fanout_writes_per_day: { value: 2e9 },
      fanout_writes_per_second_avg: { value: 23000, stated: '≈23,000/s' },
      fanout_writes_per_second_peak: { value: 70000, stated: '≈70,000/s' },
      write_amplification: { value: 200, stated: '200x' },
      text_bytes_per_day: { value: 4e9, stated: '4 GB/day' },
      text_bytes_per_year: { value: 1.5e12, stated: '≈1.5 TB/year' },
      media_bytes_per_day: { value: 900e9, stated: '900 GB/day' },
      media_bytes_per_year: { value: 320e12, stated: '≈320 TB/year', erratum: '900 GB/day x 365 = 328.5 TB/year; the chapter rounds 2.6% low' },
      timeline_memory_bytes_naive: { value: 384e9, stated: '≈384 GB' },
      celebrity_fanout_seconds: { value: 36 * 60, stated: '36 minutes for 50M writes at 23,000/s' },
    },
    notes: [
      'The 384 GB of timelines is right for its 20M users, but DAU is 50M (960 GB with --set timeline.users=50e6); the 24 B counts an author id the Redis layout does not store; and Redis keeps an 800-entry sorted set at ~5x 24 B (below).',
      '23,000/s is the average offered load, not spare capacity: a fleet of exactly that size never drains a 36-minute backlog at average load.',
      '"Active-only fan-out saves 60-70%": dormant.share is set to 0.65, the middle of that range; the chapter never redoes the arithmetic.',
      'A reader follows "maybe 5-20" celebrities: celebrities.followed is 12.5, the middle.',
      'Every timeline insert is a ZADD plus a ZREMRANGEBYRANK: Redis commands are twice the inserts.',
    ],
  },
  {
    name: 'hybrid-fanout-lesson',
    title: 'Hybrid fan-out and k-way timeline merge (English lesson)',
    summary: 'threshold 25,000, 800-entry timelines, a 50M-follower celebrity taking 200 s of the fleet',
    source: 'an English lesson on hybrid fan-out and the k-way timeline merge (its formulas lost their numbers in extraction)',
    inputs: {
      threshold: 25e3,
      'timeline.cap': 800,
      'celebrity.followers': 50e6,
      // 50M followers in 200 s of the whole fleet
      'fleet.writesPerSecond': 250e3,
      'page.size': 20,
    },
    documentValues: {
      celebrity_fanout_seconds: { value: 200, stated: '200 seconds (over 3.3 minutes)' },
    },
    notes: [
      'Only these numbers survived the extraction: threshold 25,000, cap 800, a 50M-follower celebrity, 200 s, a 7-day lease, 14-day dormancy, 100-post celebrity lists. The fleet rate (250k writes/s) follows from 50M in 200 s; every other input is feedlab\'s default.',
      'The lesson derives the threshold from two bounds: fan-out latency (threshold <= fleet rate x allowed lag) and cost (pull an author who posts more often than reader activity x pull cost / push cost), both below.',
    ],
  },
  {
    name: 'facebook-news-feed',
    title: 'Designing the Facebook News Feed (Persian)',
    summary: '2 billion users, 200 post ids of 10 B per precomputed feed, 1 minute staleness, a 90M-follower account',
    source: '"طراحی فید خبری Facebook" ("Designing the Facebook News Feed"), a Persian adaptation of a common system-design write-up',
    inputs: {
      'timeline.users': 2e9,
      'timeline.cap': 200,
      'timeline.entryBytes': 10,
      'celebrity.followers': 90e6,
      'lag.allowed': 60,
    },
    documentValues: {
      timeline_memory_bytes_naive: { value: 4e12, stated: '2 KB x 2B users ≈ 4 TB' },
    },
    notes: [
      'The write-up gives no DAU, post or read rates, follow counts or post sizes: those inputs are feedlab defaults, not the document\'s. Its 2 billion is the users to scale to, taken here as timelines.',
      'Its storage arithmetic is right; it leaves out replication and per-item overhead. Its feeds are DynamoDB items, not Redis: the Redis figures say what the same feeds would cost in Redis (a 200-entry sorted set is a skiplist, ~120 B per entry).',
      'Pushing the 90M-follower account within the 1-minute staleness bound needs 1.5M writes/s for that post alone (fleet_writes_for_celebrity).',
    ],
  },
  {
    name: 'twitter-feed-interview',
    title: "Twitter's home feed, a mock interview (Russian)",
    summary: '100M DAU, a tweet per user per 5 days, 5 timeline views, 200 followers, 2-3x peak, threshold 10,000',
    source: '"МОК-интервью по System Design / Проектируем ленту Twitter" ("Mock system-design interview: designing the Twitter feed"), in Russian',
    inputs: {
      dau: 100e6,
      'posters.share': 1,
      'posts.perPoster': 0.2,
      'reads.perUser': 5,
      peakFactor: 3,
      'followers.avg': 200,
      'post.bytes': 500,
      'media.share': 0.1,
      'media.bytes': 200e3,
      'timeline.users': 100e6,
      'timeline.cap': 800,
      'timeline.entryBytes': 8,
      threshold: 10e3,
      'celebrity.followers': 1e6,
      'burst.celebrities': 100,
      'celebrities.followed': 2.5,
      'page.size': 20,
      'lag.allowed': 5,
      'redis.nodeMemory': 128e9,
      'redis.replicas': 1,
      'api.requestsPerInstance': 500,
    },
    documentValues: {
      posts_per_day: { value: 20e6 },
      posts_per_second_avg: [
        { value: 231, stated: '≈231/s', where: 'Q4' },
        { value: 750, low: 500, high: 1000, stated: '~500-1,000/s', where: 'Q2', erratum: '20M tweets / 86,400 s = 231/s, as Q4 itself computes' },
      ],
      posts_per_second_peak: [
        { value: 580, low: 460, high: 700, stated: '460-700/s', where: 'Q4' },
        { value: 2500, low: 2000, high: 3000, stated: '2,000-3,000/s', where: 'Q2', erratum: 'at the stated 2-3x peak it is 463-694/s' },
      ],
      reads_per_day: { value: 500e6 },
      reads_per_second_avg: { value: 5787, stated: '≈5,787/s' },
      reads_per_second_peak: [
        { value: 14250, low: 11500, high: 17000, stated: '11,500-17,000/s', where: 'Q4' },
        { value: 17500, low: 15000, high: 20000, stated: '15,000-20,000/s', where: 'Q2', erratum: 'at the stated 2-3x peak the range is 11,574-17,361/s (Q4 has it right)' },
      ],
      read_write_ratio: { value: 25, stated: '~25:1' },
      fanout_writes_per_second_avg: { value: 46200, stated: '46,200 Redis writes/s' },
      text_bytes_per_day: { value: 10e9, stated: '10 GB/day' },
      text_bytes_per_year: { value: 3.65e12, low: 3.5e12, high: 4e12, stated: '~4 TB/year' },
      media_bytes_per_day: { value: 400e9, stated: '400 GB/day' },
      media_bytes_per_year: { value: 150e12, stated: '~150 TB/year' },
      timeline_memory_bytes_naive: { value: 640e9, stated: '800 x 8 B x 100M ≈ 640 GB' },
      timeline_memory_bytes_redis: {
        value: 1.3e12,
        stated: '≈1.3 TB ("~2x" Redis overhead)',
        erratum: 'an 800-entry zset is a skiplist: ~121 B per entry by MEMORY USAGE, not 2 x 8 B',
      },
      redis_shards: { value: 12.5, low: 10, high: 15, stated: '10-15 shards x 128 GB', where: 'Q11', erratum: 'sized for the 1.3 TB estimate; the real timelines need far more' },
      burst_writes_push: { value: 100e6, stated: '"100M writes/sec" for 100 celebrities', erratum: '100 tweets x 1M followers is 100M writes in all, not per second' },
      api_instances: { value: 34, stated: '17,000 / 500 = 34' },
    },
    notes: [
      'Peak factor "2-3x": peakFactor is 3, the top of the range.',
      'Each timeline write is ZADD plus ZREMRANGEBYRANK: ~92k Redis commands/s on average under push.',
      'The hybrid variant asserts an average fan-out of 50 instead of 200 (11,550 writes/s, 4x fewer); try --set followers.avg=50.',
      'Q13 says a 5-minute follower cache cuts the follow service from 231 to "50,000 / 300 s ≈ 17 RPS": 50,000 / 300 is 167 RPS, a 1.4x reduction, not 10x.',
      'Q18 runs Redis on 3 masters, which contradicts Q11\'s 10-15 shards of 128 GB.',
      'A 1M-follower fan-out at its own pipeline rate (1,000-follower chunks, 2-5 ms each) takes 2,000 pipelines, 4-10 s: over its 5 s delivery bound, which supports the 10,000 threshold.',
    ],
  },
  {
    name: 'twitter-2012',
    title: 'Twitter, "Timelines at Scale" (QCon SF 2012; DDIA ch. 1)',
    summary: '150M active users, 400M tweets/day, 300k timeline reads/s, 75 followers per tweet, 800-entry timelines, 3 replicas',
    source: "Twitter's \"Timelines at Scale\", a talk at QCon San Francisco 2012 (in English); its figures also in M. Kleppmann, \"Designing Data-Intensive Applications\", chapter 1",
    inputs: {
      dau: 150e6,
      'posters.share': 1,
      'posts.perPoster': 400 / 150,
      'reads.perUser': (300e3 * 86_400) / 150e6,
      peakFactor: 12 / 4.6,
      'followers.avg': 75,
      'timeline.users': 150e6,
      'timeline.cap': 800,
      'timeline.entryBytes': 20,
      'celebrity.followers': 31e6,
      'redis.replicas': 2,
      'lag.allowed': 5,
    },
    documentValues: {
      posts_per_day: { value: 400e6 },
      posts_per_second_avg: { value: 4600, stated: '4.6k/s' },
      posts_per_second_peak: { value: 12000, stated: '12k/s' },
      reads_per_second_avg: { value: 300e3, stated: '300k/s' },
      fanout_writes_per_second_avg: { value: 345e3, stated: '345k/s' },
      fanout_writes_per_day: { value: 30e9, stated: '~30B deliveries/day' },
    },
    notes: [
      'Timeline entries were 20 B (tweet id 8 + user id 8 + flags 4) in Redis lists, replicated 3 times.',
      'A 31M-follower account could take up to 5 minutes to fan out; the talk gives no fleet rate (5 min would mean ~103k writes/s free for that one post).',
    ],
  },
];

export function findPreset(name: string): Preset | undefined {
  return PRESETS.find((p) => p.name === name);
}
