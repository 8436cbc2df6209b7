// The workload moved to one point of the intervals, with the growth applied: rates at the peak
// and at the mean, the timelines and lists to hold, the bursts and the cold starts. Ratios of the
// inputs carry the measured workload over (more follows, more writes per post; more dormant
// users, fewer active posters and fewer eligible followers); the graph's shape stays the one
// measured at the likely values.
import { authorListInstanceBytes, timelineBytesTable } from '../../core/redis-memory.js';
import type { FanoutPolicy } from '../../core/fanout-policy.js';
import type { Scenario } from '../scenario/types.js';
import { scenarioAt, type PlanPoint } from './inputs.js';
import { peakFactors, type Workload } from './workload.js';

export interface Load {
  point: PlanPoint;
  /** Users at the point, growth applied. */
  users: number;
  postsMean: number;
  postsPeak: number;
  writesMean: number;
  writesPeak: number;
  /** Mean writes per second over the scenario's run (its window of the day, its events). */
  writesRunMean: number;
  /** Timeline writes per second of named accounts' (celebrities') posts, at the daily mean and over the run. */
  namedWritesMean: number;
  namedWritesRunMean: number;
  largestPost: number;
  audienceP99: number;
  listWritesPeak: number;
  pagesMean: number;
  pagesPeak: number;
  listsPerPage: number;
  hotListReadsPeak: number;
  burst: Workload['burst'];
  /** Cold starts: a storm's rebuilds/s at its peak; a cache loss's readers' sessions/s at the read peak and the shards it takes. */
  stormRebuildsPerSecond: number;
  stormCause: string | null;
  lossSessionsPeak: number;
  lostShards: number;
  /** Rebuilds/s at the peak of the cold starts, with `shards` planned (set by `coldStartAt`; 0 shards until then). */
  shards: number;
  rebuildsPerSecond: number;
  entriesPerRebuild: number;
  coldStartCause: string;
  /** Ratios applied to the measured per-user timelines and lists. */
  timelineLengthRatio: number;
  activeTimelineRatio: number;
  dormantTimelineRatio: number;
  listLengthRatio: number;
  ordinaryListRatio: number;
}

const ratio = (a: number, b: number) => (b > 0 ? a / b : 1);

export function loadAt(w: Workload, sc: Scenario, policy: FanoutPolicy, point: PlanPoint, growth: number): Load {
  const base = w.point;
  const users = point.population * growth;
  const U = users / base.population;
  const P = ratio(point.postsPerUserPerDay, base.postsPerUserPerDay);
  const A = ratio(1 - point.dormantShare, 1 - base.dormantShare);
  const D = ratio(point.dormantShare, base.dormantShare);
  const F = ratio(point.avgFollows, base.avgFollows);
  const S = ratio(point.sessionsPerUserPerDay, base.sessionsPerUserPerDay);
  const eligible = policy.skipDormant ? A : 1;
  const peaks = peakFactors(scenarioAt(sc, point, growth));

  const postsMean = w.posts * U * P * A;
  const ordinaryWrites = (w.writes - w.namedWrites) * U * P * A * F * eligible;
  const namedWritesMean = w.namedWrites * U * P * eligible;
  const writesMean = ordinaryWrites + namedWritesMean;
  const pagesMean = w.pages * U * S * A;
  const burst = w.burst ? { ...w.burst, deliveries: w.burst.deliveries * U * eligible, largest: w.burst.largest * U * eligible } : null;
  // a named account's audience is a share of the users; an ordinary author's, its followers
  const audience = (named: boolean) => (named ? U : F) * eligible;
  const load: Load = {
    point: { ...point },
    users,
    postsMean,
    postsPeak: postsMean * peaks.posts,
    writesMean,
    writesPeak: writesMean * peaks.posts,
    writesRunMean: writesMean * peaks.runMean,
    namedWritesMean,
    namedWritesRunMean: namedWritesMean * peaks.runMean,
    largestPost: w.largestPost * audience(w.largestPostNamed),
    audienceP99: w.audienceP99 * audience(w.audienceP99Named),
    listWritesPeak: w.listWrites * U * P * peaks.posts,
    pagesMean,
    pagesPeak: pagesMean * peaks.reads,
    listsPerPage: w.listsPerPage,
    hotListReadsPeak: w.hotListReads * U * S * A * peaks.reads,
    burst,
    stormRebuildsPerSecond: w.coldStart.stormRebuildsPerSecond * U * D,
    stormCause: w.coldStart.stormCause,
    lossSessionsPeak: w.coldStart.lossSessionsPerSecond * U * A * S * peaks.reads,
    lostShards: w.coldStart.lostShards,
    shards: 0,
    rebuildsPerSecond: 0,
    entriesPerRebuild: Math.min(sc.policy.timelineCap, w.coldStart.entriesPerRebuild * P * F * A),
    coldStartCause: '',
    timelineLengthRatio: P * F * A,
    activeTimelineRatio: U * A,
    dormantTimelineRatio: U * D,
    listLengthRatio: P,
    ordinaryListRatio: U,
  };
  return coldStartAt(load, sc.infrastructure.redisShards);
}

/**
 * The load with its cold starts at `shards` planned Redis shards: a cache loss takes its shards out
 * of those (the share lost shrinks as the fleet grows), and each reader of a lost shard rebuilds at
 * its next session, at the read peak; a cold-start storm rebuilds at its own peak. The larger binds.
 */
export function coldStartAt(load: Load, shards: number): Load {
  const lost = Math.min(load.lostShards, shards);
  const loss = lost > 0 ? (load.lossSessionsPeak * lost) / shards : 0;
  const causes: string[] = [];
  if (load.stormCause) causes.push(load.stormCause);
  if (lost > 0) {
    const which = lost < shards ? `${lost} of the ${shards} planned Redis shards` : `${load.lostShards} Redis shard${load.lostShards === 1 ? '' : 's'}, every one of the ${shards} planned`;
    causes.push(`the loss of ${which} (their readers rebuild at their next session, at the read peak)`);
  }
  return {
    ...load,
    shards,
    rebuildsPerSecond: Math.max(load.stormRebuildsPerSecond, loss),
    coldStartCause: causes.length > 0 ? causes.join(' and ') : 'none: the scenario has no cold-start storm or cache loss',
  };
}

export interface Memory {
  /** INFO used_memory of the timelines, the pulled authors' lists and the post-body cache. */
  timelineBytes: number;
  listBytes: number;
  postCacheBytes: number;
  timelines: number;
  /** The named accounts' lists, each on one shard: sampled id and bytes. */
  namedLists: { id: number; bytes: number }[];
  /** E[b^2] / E[b]^2 over timeline keys: how uneven key sizes are, for the per-shard spread. */
  keySizeSpread: number;
}

/** Redis memory at a load, with the measured encoding model (core/redis-memory.ts). */
export function memoryAt(w: Workload, load: Load, cap: number, listCap: number, post: { bytes: number; ttlSeconds: number }): Memory {
  const table = timelineBytesTable(cap);
  const n = w.timelineLength.length;
  let bytes = 0;
  let squares = 0;
  let timelines = 0;
  for (let u = 0; u < n; u++) {
    const wt = w.timelineWeight[u];
    if (wt === 0) continue;
    const count = wt * (w.timelineActive[u] ? load.activeTimelineRatio : load.dormantTimelineRatio);
    // an existing empty timeline keeps a one-entry sentinel (as in the simulator)
    const b = table[Math.max(1, Math.min(cap, Math.round(w.timelineLength[u] * load.timelineLengthRatio)))];
    bytes += b * count;
    squares += b * b * count;
    timelines += count;
  }
  let listBytes = 0;
  const namedLists: Memory['namedLists'] = [];
  const named = new Set(w.namedLists.map((l) => l.id));
  for (let a = 0; a < n; a++) {
    const wt = w.listWeight[a];
    if (wt === 0) continue;
    const b = authorListInstanceBytes(Math.max(1, Math.min(listCap, Math.round(w.listLength[a] * load.listLengthRatio))));
    if (named.has(a)) namedLists.push({ id: a, bytes: b });
    listBytes += b * (named.has(a) ? 1 : wt * load.ordinaryListRatio);
  }
  const mean = timelines > 0 ? bytes / timelines : 0;
  return {
    timelineBytes: bytes,
    listBytes,
    postCacheBytes: load.postsMean * post.ttlSeconds * post.bytes,
    timelines,
    namedLists,
    keySizeSpread: mean > 0 ? squares / timelines / (mean * mean) : 1,
  };
}
