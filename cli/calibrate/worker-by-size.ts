// A running worker's first follower page and timeline writes against a post's followers: for each
// size, posts by an author whose followers all have timelines filled to the cap, then the worker's
// own histograms of just those posts (eventFirstPageMs, eventWritesMs: its lanes, its event loop,
// its metrics and acknowledgements beside the batches, its pooled connections' plans). A point is
// the median of a size's posts with their p10-p90; the line through the points (off by the least
// share of each, sim/calibration/figures.ts) is the model's writes (costs.batch,
// writesPerSecondPerWorker) and first page (costs.expand, expandPerFollower) when it is sound
// (sim/calibration/document.ts).
import type { Redis } from 'ioredis';
import type { Distribution, WorkerBySize, WorkerStages } from '../../sim/calibration/document.js';
import { commandTimes, secondsPerListWrite, timesDelta } from '../../sim/replay/redis-figures.js';
import type { CommandTime } from '../../sim/scenario/calibration.js';
import { fitLineRelative, type Fit } from '../../sim/calibration/figures.js';
import { Rng } from '../../core/random.js';
import { PacedPoster, type PostTarget } from './paced-posts.js';
import { CalibrationStopped } from './rounds.js';
import { CALIBRATE } from './settings.js';
import { point } from './worker-stages.js';

/**
 * Posts a second for `authors` authors of `followers`: the setting's rate, or slower where writing
 * one would keep the worker busy more than its share, or where the posts (going round the authors)
 * would come back to an author's timelines more often than every `revisitSeconds` on average.
 */
export function postsPerSecond(followers: number, authors: number, secondsPerWrite: number): number {
  const s = CALIBRATE.workerBySize;
  const busy = followers * secondsPerWrite;
  return Math.min(s.perSecond, busy > 0 ? s.busyShare / busy : Infinity, authors / s.revisitSeconds);
}

export async function measureWorkerBySize(
  o: PostTarget & {
    /** For each size, authors with disjoint audiences of it: its posts go round them. */
    authors: readonly { ids: readonly number[]; followers: number }[];
    /** Posts of each size: this many samples' worth. */
    samples: number;
    /** The write fit's seconds a timeline write (how long a post keeps the worker busy). */
    secondsPerWrite: number;
    seed: number;
    /** The worker's stages of what was posted since the last call. */
    stagesSince: () => Promise<WorkerStages>;
    /** For Redis's own time per timeline write and per command over the posts (commandstats: nothing else writes meanwhile). */
    redis: Redis;
    signal?: AbortSignal;
    onSize?: (followers: number) => void;
  },
): Promise<WorkerBySize> {
  const s = CALIBRATE.workerBySize;
  const poster = new PacedPoster(o, new Rng(o.seed));
  const firstPage = new Map<number, Point>();
  const writes = new Map<number, Point>();
  const spreads: WorkerStages['writes'][] = [];
  let events = 0;
  let commands: Map<string, CommandTime>;
  try {
    await o.stagesSince();
    const before = await commandTimes(o.redis);
    for (const a of o.authors) {
      if (o.signal?.aborted) throw new CalibrationStopped('calibrate stopped');
      await poster.send(o.samples * s.postsPerSample, postsPerSecond(a.followers, a.ids.length, o.secondsPerWrite), (i) => a.ids[i % a.ids.length], 'measuring a running worker by the size of a post');
      const st = await o.stagesSince();
      events += st.events;
      firstPage.set(a.followers, point(st.firstPage));
      writes.set(a.followers, point(st.writes));
      if (a.followers >= s.spreadFrom) spreads.push(st.writes);
      o.onSize?.(a.followers);
    }
    commands = timesDelta(before, await commandTimes(o.redis));
  } finally {
    poster.close();
  }
  return {
    events,
    firstPage: fitPoints(firstPage),
    writes: fitPoints(writes),
    redisSecondsPerWrite: secondsPerListWrite(commands.get('evalsha'), commands.get('zremrangebyrank')),
    redisCommands: Object.fromEntries(commands),
    writesSpread: pooledSpread(spreads),
  };
}

/**
 * How posts scatter about their size's median: each size's posts as ratios to its median, pooled
 * (a size's share of the posts below a ratio read off its quantiles, linear between them), and the
 * pool's quantiles at the sizes' p. Not the mean of the sizes' quantiles: a size's p98 of 40 posts
 * is its largest, and one slow post among 160 had put the pool's p98 at 3.1x. Null without a size
 * with a median.
 */
export function pooledSpread(sizes: readonly WorkerStages['writes'][]): Distribution | null {
  const ratios = sizes.flatMap((d) => {
    const median = point(d).median;
    return d.n > 0 && median > 0 ? [{ n: d.n, points: d.points.map((q) => ({ p: q.p, r: q.value / median })) }] : [];
  });
  if (ratios.length === 0) return null;
  const n = ratios.reduce((a, s) => a + s.n, 0);
  /** The share of every post at or under ratio r. */
  const below = (r: number) => ratios.reduce((a, s) => a + s.n * shareUnder(s.points, r), 0) / n;
  const lo = Math.min(...ratios.map((s) => s.points[0].r));
  const hi = Math.max(...ratios.map((s) => s.points[s.points.length - 1].r));
  const points = ratios[0].points.map(({ p }) => {
    if (p <= 0) return { p, value: lo };
    if (p >= 1) return { p, value: hi };
    // the least ratio with that share under it, to a millionth of the range (60 halvings at most)
    let [a, b] = [lo, hi];
    for (let i = 0; i < 60 && b - a > (hi - lo) * 1e-6; i++) {
      const mid = (a + b) / 2;
      if (below(mid) >= p) b = mid;
      else a = mid;
    }
    return { p, value: b };
  });
  return { points, n };
}

/** A size's share of posts at or under ratio r: its quantile points, linear between them. */
function shareUnder(points: readonly { p: number; r: number }[], r: number): number {
  if (r < points[0].r) return 0;
  let share = 0;
  for (let i = 0; i < points.length; i++) {
    const q = points[i];
    if (q.r <= r) share = q.p;
    else {
      // (q.r > r >= prev.r: a repeated value was taken by the branch above)
      const prev = points[i - 1];
      return prev.p + ((r - prev.r) / (q.r - prev.r)) * (q.p - prev.p);
    }
  }
  return share;
}

type Point = ReturnType<typeof point>;

/** The line through the points' medians, off by the least share of each; each point keeps its posts' p10-p90 and count. */
function fitPoints(points: ReadonlyMap<number, Point>): Fit {
  const fit = fitLineRelative(new Map([...points].map(([x, p]) => [x, [p.median]])));
  return { ...fit, points: fit.points.map((p) => ({ ...p, ...points.get(p.x)! })) };
}
