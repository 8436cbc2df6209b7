// The Redis and Postgres costs of the fan-out and the read path, in the order calibrate measures
// them, on whatever lists and rows it is given: the calibration world in its scratch space, or a
// target's rows (read only) with lists of its own under a scratch key prefix.
import type { Redis } from 'ioredis';
import type { PostBodyCache } from '../../server/cache/post-bodies.js';
import type { TimelineCache } from '../../server/cache/timelines.js';
import type { FeedRepository } from '../../server/store/repository.js';
import type { Measurements, Refusal } from '../../sim/calibration/document.js';
import { measureEventStatements, measureExpansion, measureRebuild } from './postgres-costs.js';
import type { Steps } from './progress.js';
import { fillTimelines, measurePageReads, measureRtt, measureTimelineWrites } from './redis-costs.js';

export interface StoreCostEnv {
  redis: Redis;
  /** Timelines the write fit writes into, and the page reads read (batch size: the largest batch). */
  timelines: TimelineCache;
  bodies: PostBodyCache;
  repo: FeedRepository;
  /** Users whose timelines are filled to the cap and take the write fit's batches. */
  writeTargets: readonly number[];
  /** Present timelines read a page at a time (their first page's bodies cached), and whether a read renews the lease. */
  pageReaders: readonly number[];
  pageSize: number;
  renewOnRead: boolean;
  /** Made ready for the page reads after the write fit (a target's scratch timelines get their first pages' bodies). */
  beforePageReads?: () => Promise<void>;
  expansionAuthors: readonly number[];
  followerPage: number;
  dormantMs: number;
  eventAuthors: readonly number[];
  rebuildReaders: readonly number[];
  /** The read path's pull threshold (a rebuild leaves pulled authors out). */
  threshold: number;
}

export type StoreCosts = Omit<Measurements, 'api' | 'postToLog'>;

/** The costs, and the entries a rebuilt timeline held (for the provenance). */
export async function measureStoreCosts(env: StoreCostEnv, steps: Steps, refused: Refusal[]): Promise<{ costs: StoreCosts; rebuiltEntries: number }> {
  const rtt = await measureRtt(env.redis, steps.begin('rtt', 'measuring the Redis round trip (PING)'));

  const writeRounds = steps.begin('timeline writes', `measuring timeline writes against batch size (${env.writeTargets.length} timelines filled to the cap first)`);
  await fillTimelines(env.timelines, env.writeTargets, Date.now());
  const writes = await measureTimelineWrites(env.redis, env.timelines, env.writeTargets, writeRounds);
  if (writes.redisPerWrite.n === 0) refused.push({ key: 'costs.zadd', why: `Redis time per timeline write: other clients' EVALSHA calls got into all ${writes.foreignSamples} samples`, notMeasured: true });

  const readRounds = steps.begin('page reads', 'measuring page reads and MGETs of their bodies (commandstats)');
  await env.beforePageReads?.();
  const reads = await measurePageReads(env.redis, env.timelines, env.bodies, env.pageReaders, env.pageSize, readRounds, env.renewOnRead);
  if (reads.pageRead.n === 0) refused.push({ key: 'costs.zrange', why: "page reads: other clients' ZREVRANGEBYSCORE calls got into every sample", notMeasured: true });
  if (reads.mgetPerKey.n === 0) refused.push({ key: 'costs.mgetPerKey', why: "MGET per key: other clients' MGET calls got into every sample", notMeasured: true });

  const expansion = await measureExpansion(
    env.repo,
    env.expansionAuthors,
    env.followerPage,
    () => Math.max(0, Date.now() - env.dormantMs),
    steps.begin('expansion', `measuring follower pages of ${env.expansionAuthors.length} authors against their rows`),
  );

  const eventRounds = steps.begin('event statements', "measuring the worker's statement per post event");
  const eventStatements = await measureEventStatements(env.repo, env.eventAuthors, eventRounds);

  const { entries, ...rebuild } = await measureRebuild(env.repo, env.timelines, env.rebuildReaders, env.threshold, steps.begin('rebuild', 'measuring timeline rebuilds from Postgres'));
  return {
    costs: { rtt, timelineWrites: { fit: writes.fit, redisPerWrite: writes.redisPerWrite }, pageRead: reads.pageRead, pageReadByEntries: reads.pageReadByEntries, mgetPerKey: reads.mgetPerKey, expansion, eventStatements, rebuild },
    rebuiltEntries: entries,
  };
}
