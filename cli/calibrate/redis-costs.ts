// The Redis costs the simulator charges, measured with the server's own cache code from this process
// (a client on this machine, as the server and the workers are): the round trip (PING), a pipelined
// batch of timeline writes as the fan-out worker sends it (TimelineCache.pushEntries, one batch, no
// other in flight) against its size, and Redis's own time per timeline write, per page read of a
// list (ZREVRANGEBYSCORE as the read path sends it) and per key of a page's MGET, from INFO
// commandstats over the sample (a sample that other clients' calls of the same command got into is
// thrown away: their time is not ours).
import type { Redis } from 'ioredis';
import { median } from 'simple-statistics';
import type { FeedPosition } from '../../core/cursor.js';
import { makePostId } from '../../core/post-id.js';
import { readSlices } from '../../server/cache/post-list.js';
import type { PostBodyCache } from '../../server/cache/post-bodies.js';
import type { TimelineCache } from '../../server/cache/timelines.js';
import { firstSlice } from '../../core/read-plan.js';
import { timelinesPerAddCall } from '../../core/redis-pipeline.js';
import { fitLine, SampleSet, spreadOf, type Fit, type Spread } from '../../sim/calibration/figures.js';
import { commandTimes } from '../../sim/replay/redis-figures.js';
import { HISTORY_NODE_ID } from '../replay/world.js';
import { inRounds, type Rounds } from './rounds.js';
import { CALIBRATE } from './settings.js';

/** Redis's time of `command` over `work` per `per` (by default its calls), or NaN when others' calls of it got in (calls other than `ours`). */
async function redisTimePerCall(redis: Redis, command: string, ours: number, work: () => Promise<void>, per = ours): Promise<number> {
  const a = (await commandTimes(redis)).get(command) ?? { calls: 0, usec: 0 };
  await work();
  const b = (await commandTimes(redis)).get(command) ?? { calls: 0, usec: 0 };
  const calls = b.calls - a.calls;
  if (calls !== ours) return NaN;
  return (b.usec - a.usec) / 1e6 / per;
}

/** A PING's round trip: each sample the median of many, one at a time. */
export async function measureRtt(redis: Redis, rounds: Rounds): Promise<Spread> {
  const samples: number[] = [];
  await inRounds(rounds, async (keep) => {
    const times: number[] = [];
    for (let i = 0; i < CALIBRATE.rtt.pingsPerSample; i++) {
      const t0 = performance.now();
      await redis.ping();
      times.push((performance.now() - t0) / 1000);
    }
    if (keep) samples.push(median(times));
  });
  return spreadOf(samples);
}

/** Fill these users' timelines to the cap with old posts (a timeline in the steady state: each write trims one). */
export async function fillTimelines(timelines: TimelineCache, users: readonly number[], nowMs: number): Promise<void> {
  const cap = timelines.shape.cap;
  const entries: FeedPosition[] = Array.from({ length: cap }, (_, i) => {
    const ms = nowMs - 2 * 86_400_000 - i * 1000;
    return { id: makePostId(ms, HISTORY_NODE_ID, 0), createdAt: ms };
  });
  let next = 0;
  const lane = async () => {
    while (next < users.length) {
      const u = users[next++];
      await timelines.rebuild(u, () => entries);
    }
  };
  await Promise.all(Array.from({ length: 16 }, lane));
}

/**
 * One batch of each size per round, into timelines filled to the cap: the batch's wall time (a fit
 * against its size) and Redis's time of the EVALSHAs per timeline over the round (an add call
 * writes up to timelinesPerAddCall(1) of them on calibrate's standalone Redis).
 */
export async function measureTimelineWrites(redis: Redis, timelines: TimelineCache, targets: readonly number[], rounds: Rounds): Promise<{ fit: Fit; redisPerWrite: Spread; foreignSamples: number }> {
  const sizes = CALIBRATE.timelineWrites.batchSizes;
  if (timelines.batchSize < Math.max(...sizes)) throw new Error('calibrate: the timeline cache must take the largest batch in one pipeline');
  const walls = new SampleSet();
  const perWrite: number[] = [];
  let foreign = 0;
  let seq = 0;
  await inRounds(rounds, async (keep) => {
    const round = new Map<number, number>();
    const timelinesWritten = sizes.reduce((a, b) => a + b, 0);
    const calls = sizes.reduce((a, n) => a + Math.ceil(n / timelinesPerAddCall(1)), 0);
    const t = await redisTimePerCall(redis, 'evalsha', calls, async () => {
      for (const n of sizes) {
        const now = Date.now();
        const post = { id: makePostId(now, HISTORY_NODE_ID - 1, seq++ % 4096), createdAt: now };
        const t0 = performance.now();
        const r = await timelines.pushEntries(targets.slice(0, n), [post]);
        round.set(n, (performance.now() - t0) / 1000);
        if (r.written !== n || r.batches !== 1) throw new Error(`calibrate: a batch of ${n} wrote ${r.written} timelines in ${r.batches} batches (a filled timeline went missing?)`);
      }
    }, timelinesWritten);
    if (!keep) return;
    for (const [n, s] of round) walls.add(n, s);
    if (Number.isNaN(t)) foreign++;
    else perWrite.push(t);
  });
  return { fit: fitLine(walls.byKey), redisPerWrite: spreadOf(perWrite), foreignSamples: foreign };
}

/**
 * Page reads of these readers' timelines as the read path sends them (lease renewed, a page plus
 * its slack), and an MGET of each page's bodies: Redis's time per ZREVRANGEBYSCORE, and per key of
 * the MGET. The reads are also sent at smaller slices (CALIBRATE.pageReads.slices; the timelines
 * hold more): Redis's time against the entries a read returns, a straight line.
 */
export async function measurePageReads(
  redis: Redis,
  timelines: TimelineCache,
  bodies: PostBodyCache,
  readers: readonly number[],
  pageSize: number,
  rounds: Rounds,
  renew: boolean,
): Promise<{ pageRead: Spread; pageReadByEntries: Fit; mgetPerKey: Spread; foreignSamples: number }> {
  const n = CALIBRATE.pageReads.perSample;
  const full = firstSlice(pageSize);
  const slices = [...new Set([...CALIBRATE.pageReads.slices, full])].sort((x, y) => x - y);
  const reads: number[] = [];
  const bySlice = new SampleSet();
  const perKey: number[] = [];
  let foreign = 0;
  const keyOf = (i: number) => timelines.key(readers[i % readers.length]);
  const renewMs = renew ? timelines.shape.leaseMs : undefined;
  await inRounds(rounds, async (keep) => {
    const pages: string[][] = [];
    let spoiled = false;
    for (const limit of slices) {
      const t = await redisTimePerCall(redis, 'zrevrangebyscore', n, async () => {
        for (let i = 0; i < n; i++) {
          const [slice] = await readSlices(redis, [{ key: keyOf(i), renewMs }], { limit });
          if (limit === full) pages.push((slice?.entries ?? []).slice(0, pageSize).map((e) => e.id));
        }
      });
      if (!keep) continue;
      if (Number.isNaN(t)) spoiled = true;
      else {
        bySlice.add(limit, t);
        if (limit === full) reads.push(t);
      }
    }
    const keys = pages.reduce((s, p) => s + p.length, 0);
    const m = await redisTimePerCall(redis, 'mget', n, async () => {
      for (const ids of pages) await bodies.getMany(ids);
    });
    if (!keep) return;
    if (spoiled || Number.isNaN(m)) foreign++;
    if (!Number.isNaN(m) && keys > 0) perKey.push((m * n) / keys);
  });
  return { pageRead: spreadOf(reads), pageReadByEntries: fitLine(bySlice.byKey), mgetPerKey: spreadOf(perKey), foreignSamples: foreign };
}
