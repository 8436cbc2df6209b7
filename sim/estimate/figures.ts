// Every figure of the estimate, in the order a learner derives them: a formula over inputs and
// earlier figures, evaluated with the dependencies recorded, so that `--set` can say exactly which
// figures an input moves.
import { listInstanceBytes, timelineInstanceBytes, timelineNaiveBytes, zsetUsageBytes } from '../../core/redis-memory.js';
import type { Inputs } from './inputs.js';

export type FigureUnit = 'count' | 'per-day' | 'per-second' | 'ratio' | 'bytes' | 'bytes/day' | 'bytes/year' | 'seconds' | 'share';

export interface FigureSpec {
  id: string;
  heading: string;
  label: string;
  unit: FigureUnit;
  /** The formula over input names and earlier figure ids, as printed by --explain. */
  formula: string;
  compute: (v: Record<string, number>) => number;
}

const DAY = 86_400;
const YEAR_DAYS = 365;

const H_RATES = 'Posts and reads';
const H_FANOUT = 'Fan-out writes';
const H_STORAGE = 'Storage';
const H_MEMORY = 'Timeline memory';
const H_CELEB = 'Celebrities and the push/pull threshold';
const H_READ = 'Reading a merged feed';
const H_FLEET = 'Redis shards and API instances';

export const FIGURES: readonly FigureSpec[] = [
  { id: 'posts_per_day', heading: H_RATES, label: 'posts per day', unit: 'per-day', formula: 'dau × posters.share × posts.perPoster', compute: (v) => v['dau'] * v['posters.share'] * v['posts.perPoster'] },
  { id: 'posts_per_second_avg', heading: H_RATES, label: 'posts per second, average', unit: 'per-second', formula: 'posts_per_day / 86400', compute: (v) => v.posts_per_day / DAY },
  { id: 'posts_per_second_peak', heading: H_RATES, label: 'posts per second, peak', unit: 'per-second', formula: 'posts_per_second_avg × peakFactor', compute: (v) => v.posts_per_second_avg * v.peakFactor },
  { id: 'reads_per_day', heading: H_RATES, label: 'feed reads per day', unit: 'per-day', formula: 'dau × reads.perUser', compute: (v) => v['dau'] * v['reads.perUser'] },
  { id: 'reads_per_second_avg', heading: H_RATES, label: 'feed reads per second, average', unit: 'per-second', formula: 'reads_per_day / 86400', compute: (v) => v.reads_per_day / DAY },
  { id: 'reads_per_second_peak', heading: H_RATES, label: 'feed reads per second, peak', unit: 'per-second', formula: 'reads_per_second_avg × peakFactor', compute: (v) => v.reads_per_second_avg * v.peakFactor },
  { id: 'read_write_ratio', heading: H_RATES, label: 'reads per post', unit: 'ratio', formula: 'reads_per_day / posts_per_day', compute: (v) => v.reads_per_day / v.posts_per_day },

  { id: 'fanout_writes_per_post', heading: H_FANOUT, label: 'timeline writes per post (push)', unit: 'count', formula: 'followers.avg', compute: (v) => v['followers.avg'] },
  { id: 'fanout_writes_per_day', heading: H_FANOUT, label: 'timeline writes per day', unit: 'per-day', formula: 'posts_per_day × fanout_writes_per_post', compute: (v) => v.posts_per_day * v.fanout_writes_per_post },
  { id: 'fanout_writes_per_second_avg', heading: H_FANOUT, label: 'timeline writes per second, average', unit: 'per-second', formula: 'fanout_writes_per_day / 86400', compute: (v) => v.fanout_writes_per_day / DAY },
  { id: 'fanout_writes_per_second_peak', heading: H_FANOUT, label: 'timeline writes per second, peak', unit: 'per-second', formula: 'fanout_writes_per_second_avg × peakFactor', compute: (v) => v.fanout_writes_per_second_avg * v.peakFactor },
  { id: 'write_amplification', heading: H_FANOUT, label: 'write amplification', unit: 'ratio', formula: 'fanout_writes_per_second_avg / posts_per_second_avg', compute: (v) => v.fanout_writes_per_second_avg / v.posts_per_second_avg },
  { id: 'fanout_writes_per_post_active', heading: H_FANOUT, label: 'timeline writes per post, dormant followers skipped', unit: 'count', formula: 'fanout_writes_per_post × (1 − dormant.share)', compute: (v) => v.fanout_writes_per_post * (1 - v['dormant.share']) },
  { id: 'fanout_writes_per_day_active', heading: H_FANOUT, label: 'timeline writes per day, dormant followers skipped', unit: 'per-day', formula: 'posts_per_day × fanout_writes_per_post_active', compute: (v) => v.posts_per_day * v.fanout_writes_per_post_active },
  { id: 'fanout_writes_per_second_active_avg', heading: H_FANOUT, label: 'timeline writes per second, dormant followers skipped', unit: 'per-second', formula: 'fanout_writes_per_day_active / 86400', compute: (v) => v.fanout_writes_per_day_active / DAY },
  { id: 'fanout_writes_per_second_active_peak', heading: H_FANOUT, label: 'timeline writes per second at peak, dormant followers skipped', unit: 'per-second', formula: 'fanout_writes_per_day_active / 86400 × peakFactor', compute: (v) => (v.fanout_writes_per_day_active / DAY) * v.peakFactor },

  { id: 'text_bytes_per_day', heading: H_STORAGE, label: 'post text and metadata per day', unit: 'bytes/day', formula: 'posts_per_day × post.bytes', compute: (v) => v.posts_per_day * v['post.bytes'] },
  { id: 'text_bytes_per_year', heading: H_STORAGE, label: 'post text and metadata per year', unit: 'bytes/year', formula: 'text_bytes_per_day × 365', compute: (v) => v.text_bytes_per_day * YEAR_DAYS },
  { id: 'media_bytes_per_day', heading: H_STORAGE, label: 'media per day', unit: 'bytes/day', formula: 'posts_per_day × media.share × media.bytes', compute: (v) => v.posts_per_day * v['media.share'] * v['media.bytes'] },
  { id: 'media_bytes_per_year', heading: H_STORAGE, label: 'media per year', unit: 'bytes/year', formula: 'media_bytes_per_day × 365', compute: (v) => v.media_bytes_per_day * YEAR_DAYS },

  { id: 'timeline_memory_bytes_naive', heading: H_MEMORY, label: "timelines at the document's bytes per entry", unit: 'bytes', formula: 'timeline.users × timeline.cap × timeline.entryBytes', compute: (v) => v['timeline.users'] * v['timeline.cap'] * v['timeline.entryBytes'] },
  { id: 'timeline_bytes_redis_usage', heading: H_MEMORY, label: 'one full timeline as a Redis 7 sorted set, MEMORY USAGE', unit: 'bytes', formula: 'zsetMemoryUsage(timeline.cap)', compute: (v) => zsetUsageBytes(v['timeline.cap']) },
  {
    id: 'timeline_bytes_redis',
    heading: H_MEMORY,
    label: 'the same, instance-wide (plus keyspace entry and allocator fragmentation)',
    unit: 'bytes',
    formula: 'zsetInstanceBytes(timeline.cap)',
    compute: (v) => timelineInstanceBytes(v['timeline.cap']),
  },
  { id: 'timeline_memory_bytes_redis', heading: H_MEMORY, label: 'timelines as Redis 7 sorted sets', unit: 'bytes', formula: 'timeline.users × timeline_bytes_redis', compute: (v) => v['timeline.users'] * v.timeline_bytes_redis },
  { id: 'timeline_memory_ratio', heading: H_MEMORY, label: 'sorted sets over the document', unit: 'ratio', formula: 'timeline_memory_bytes_redis / timeline_memory_bytes_naive', compute: (v) => v.timeline_memory_bytes_redis / v.timeline_memory_bytes_naive },
  { id: 'timeline_memory_ratio_24b', heading: H_MEMORY, label: 'sorted sets over 24 B per entry', unit: 'ratio', formula: 'timeline_bytes_redis / (24 × timeline.cap)', compute: (v) => v.timeline_bytes_redis / timelineNaiveBytes(v['timeline.cap']) },
  {
    id: 'timeline_memory_bytes_redis_list',
    heading: H_MEMORY,
    label: 'timelines as Redis 7 lists of ids instead (no scores: ordering by insertion)',
    unit: 'bytes',
    formula: 'timeline.users × listInstanceBytes(timeline.cap)',
    compute: (v) => v['timeline.users'] * listInstanceBytes(v['timeline.cap']),
  },

  { id: 'celebrity_fanout_seconds', heading: H_CELEB, label: "one celebrity post's fan-out on the fleet (push)", unit: 'seconds', formula: 'celebrity.followers / fleet.writesPerSecond', compute: (v) => v['celebrity.followers'] / v['fleet.writesPerSecond'] },
  { id: 'celebrity_fanout_seconds_active', heading: H_CELEB, label: 'the same, dormant followers skipped', unit: 'seconds', formula: 'celebrity_fanout_seconds × (1 − dormant.share)', compute: (v) => v.celebrity_fanout_seconds * (1 - v['dormant.share']) },
  { id: 'fleet_writes_for_celebrity', heading: H_CELEB, label: 'fleet rate that pushes one celebrity post within the allowed lag', unit: 'per-second', formula: 'celebrity.followers / lag.allowed', compute: (v) => v['celebrity.followers'] / v['lag.allowed'] },
  { id: 'threshold_latency_bound', heading: H_CELEB, label: 'largest audience pushed within the allowed lag', unit: 'count', formula: 'fleet.writesPerSecond × lag.allowed', compute: (v) => v['fleet.writesPerSecond'] * v['lag.allowed'] },
  {
    id: 'crossover_posts_per_day',
    heading: H_CELEB,
    label: 'posting rate above which pulling an author costs less than pushing (any audience)',
    unit: 'per-day',
    // a follower the fan-out skips costs neither a push nor a pull; only pushed followers who never
    // read make pushing dearer
    formula: '(dormant.share > 0 ? 1 : readers.activeShare) × reads.perUser × cost.pullRead / cost.pushWrite',
    compute: (v) => ((v['dormant.share'] > 0 ? 1 : v['readers.activeShare']) * v['reads.perUser'] * v['cost.pullRead']) / v['cost.pushWrite'],
  },
  { id: 'burst_writes_push', heading: H_CELEB, label: 'World Cup burst: timeline writes under push', unit: 'count', formula: 'burst.celebrities × celebrity.followers', compute: (v) => v['burst.celebrities'] * v['celebrity.followers'] },
  { id: 'burst_fanout_seconds_push', heading: H_CELEB, label: 'World Cup burst: time for the fleet to write them', unit: 'seconds', formula: 'burst_writes_push / fleet.writesPerSecond', compute: (v) => v.burst_writes_push / v['fleet.writesPerSecond'] },
  {
    id: 'burst_writes_hybrid',
    heading: H_CELEB,
    label: 'World Cup burst: writes under the threshold (one list write per pulled celebrity)',
    unit: 'count',
    formula: 'burst.celebrities × (celebrity.followers > threshold ? 1 : celebrity.followers)',
    compute: (v) => v['burst.celebrities'] * (v['celebrity.followers'] > v.threshold ? 1 : v['celebrity.followers']),
  },
  { id: 'hybrid_write_reduction', heading: H_CELEB, label: 'World Cup burst: writes saved by hybrid over push', unit: 'share', formula: '1 − burst_writes_hybrid / burst_writes_push', compute: (v) => 1 - v.burst_writes_hybrid / v.burst_writes_push },

  { id: 'redis_ops_per_read', heading: H_READ, label: 'Redis operations per feed read', unit: 'count', formula: '1 + celebrities.followed + 1', compute: (v) => 2 + v['celebrities.followed'] },
  { id: 'merge_candidates_per_read', heading: H_READ, label: 'posts merged per page (k-way)', unit: 'count', formula: '(1 + celebrities.followed) × page.size', compute: (v) => (1 + v['celebrities.followed']) * v['page.size'] },
  {
    id: 'read_latency_seconds',
    heading: H_READ,
    label: 'feed read on idle Redis: 2 round trips + the lists + the page',
    unit: 'seconds',
    formula: '2 × cost.rtt + (1 + celebrities.followed) × cost.pullRead + page.size × cost.hydratePerPost',
    compute: (v) => 2 * v['cost.rtt'] + (1 + v['celebrities.followed']) * v['cost.pullRead'] + v['page.size'] * v['cost.hydratePerPost'],
  },
  { id: 'celebrity_list_reads_per_second_peak', heading: H_READ, label: 'celebrity list reads per second, peak', unit: 'per-second', formula: 'reads_per_second_peak × celebrities.followed', compute: (v) => v.reads_per_second_peak * v['celebrities.followed'] },

  { id: 'redis_shards', heading: H_FLEET, label: 'Redis shards for the timelines', unit: 'count', formula: 'ceil(timeline_memory_bytes_redis / redis.nodeMemory)', compute: (v) => Math.ceil(v.timeline_memory_bytes_redis / v['redis.nodeMemory']) },
  { id: 'redis_nodes', heading: H_FLEET, label: 'Redis nodes with replicas', unit: 'count', formula: 'redis_shards × (1 + redis.replicas)', compute: (v) => v.redis_shards * (1 + v['redis.replicas']) },
  { id: 'api_instances', heading: H_FLEET, label: 'API instances for peak feed reads', unit: 'count', formula: 'ceil(reads_per_second_peak / api.requestsPerInstance)', compute: (v) => Math.ceil(v.reads_per_second_peak / v['api.requestsPerInstance']) },
];

export interface Evaluated {
  values: Record<string, number>;
  /** For each figure, the inputs it depends on, directly or through other figures. */
  inputsOf: Record<string, Set<string>>;
}

/** Evaluate every figure in order, recording which inputs each one reads. */
export function evaluate(inputs: Inputs): Evaluated {
  const values: Record<string, number> = { ...inputs };
  const inputsOf: Record<string, Set<string>> = {};
  for (const f of FIGURES) {
    const used = new Set<string>();
    const view = new Proxy(values, {
      get(target, key: string) {
        if (!(key in target)) throw new Error(`figure ${f.id} reads "${key}", which is neither an input nor an earlier figure`);
        if (key in inputs) used.add(key);
        else for (const dep of inputsOf[key] ?? []) used.add(dep);
        return target[key];
      },
    });
    values[f.id] = f.compute(view);
    inputsOf[f.id] = used;
  }
  return { values, inputsOf };
}
