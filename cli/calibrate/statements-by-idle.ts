// A running worker's stages after idle time before each event (sim/model/idle-wake.ts): posts by the
// hop's authors at the paces of the settings table and at the hop's own, one phase, a point each.
// The hop's own posts are not a point: they are the worker's first, and their median statement sat
// over this phase's (2026-12-06, AMD EPYC: 0.399 and 0.372 ms against 0.32-0.35 and 0.23-0.28 either
// side; measured again at the hop's pace in this phase, 0.335 and 0.280 where the hop gave 0.357
// and 0.343), which moved every replay's statement, met at idle times past the hop's, down by the
// difference (a celebrity-burst statement p50 0.835 of the replays', then 1.00). The model moves
// the hop's statements by this phase's difference between idle times, its level left as the hop's.
// One worker taking Poisson posts at r a second is idle for exponential gaps of mean 1/r, whose
// typical value e^E[ln gap] is e^-γ / r: a point is that idle time and the median statement of the
// pace's events (the worker's own eventStatementsMs), and of their first page and writes (the hop's
// authors have 10-30 followers: one page, one batch).
import { MIN_IDLE_POINT_EVENTS, type StatementsByIdle, type WorkerStages } from '../../sim/calibration/document.js';
import { Rng } from '../../core/random.js';
import { PacedPoster, type PostTarget } from './paced-posts.js';
import { CalibrationStopped } from './rounds.js';
import { CALIBRATE } from './settings.js';
import { point } from './worker-stages.js';

/** Euler's constant γ: the mean of ln x over an exponential of mean 1 is -γ. */
const EULER_GAMMA = 0.5772156649015329;

/** The typical idle gap (seconds) of one worker taking Poisson posts at `perSecond`. */
export function typicalGap(perSecond: number): number {
  return Math.exp(-EULER_GAMMA) / perSecond;
}

/**
 * The paces of the curve, posts a second, ascending in idle time: the settings' and the hop's own
 * (the reference). The refusal and the ETA read it at the settings' hop pace, the one calibrate posts.
 */
export function curvePaces(hopPerSecond: number = CALIBRATE.postToLog.perSecond): number[] {
  return [...new Set([...CALIBRATE.statementsByIdle.perSecond, hopPerSecond])].sort((a, b) => b - a);
}

/** Posts sent at a pace: `samples` samples' worth, but no longer than the settings' cap. */
export function postsAtPace(samples: number, perSecond: number): number {
  const s = CALIBRATE.statementsByIdle;
  return Math.min(samples * s.postsPerSample, Math.floor(s.maxSecondsPerPace * perSecond));
}

/** The first pace at which `samples` samples send fewer posts than a point needs (MIN_IDLE_POINT_EVENTS), or undefined. */
function shortPace(samples: number): number | undefined {
  return curvePaces().find((r) => postsAtPace(samples, r) < MIN_IDLE_POINT_EVENTS);
}

/**
 * Why `samples` samples cannot give a sound curve by idle time, or null: calibrate then spends no
 * time on posts whose points it would refuse.
 */
export function idleCurveOutOfReach(samples: number): string | null {
  const short = shortPace(samples);
  if (short === undefined) return null;
  // the fewest samples that reach every pace's count (none when a pace's time cap holds it under)
  const s = CALIBRATE.statementsByIdle;
  const enough = curvePaces().every((r) => Math.floor(s.maxSecondsPerPace * r) >= MIN_IDLE_POINT_EVENTS) ? Math.ceil(MIN_IDLE_POINT_EVENTS / s.postsPerSample) : null;
  const fix = enough === null ? '' : `: --samples ${enough} or more measures them`;
  return `a worker's stages by its idle time need ${MIN_IDLE_POINT_EVENTS} posts at each pace, and --samples ${samples} sends ${postsAtPace(samples, short)} at ${short} a second${fix}`;
}

export async function measureStatementsByIdle(
  o: PostTarget & {
    authors: readonly number[];
    /** The hop's pace, posts a second: the curve's reference gap, measured again in this phase. */
    hopPerSecond: number;
    /** Posts at each pace: this many samples' worth. */
    samples: number;
    seed: number;
    /** The worker's stages of what was posted since the last call. */
    stagesSince: () => Promise<WorkerStages>;
    signal?: AbortSignal;
    onPace?: (perSecond: number) => void;
  },
): Promise<StatementsByIdle> {
  const stages = (st: WorkerStages) => ({ ...point(st.statements), firstPage: point(st.firstPage), writes: point(st.writes) });
  const points: StatementsByIdle['points'] = [];
  const poster = new PacedPoster(o, new Rng(o.seed));
  let next = 0;
  try {
    await o.stagesSince();
    for (const perSecond of curvePaces(o.hopPerSecond)) {
      if (o.signal?.aborted) throw new CalibrationStopped('calibrate stopped');
      await poster.send(postsAtPace(o.samples, perSecond), perSecond, () => o.authors[next++ % o.authors.length], 'measuring a running worker after idle time');
      points.push({ gap: typicalGap(perSecond), ...stages(await o.stagesSince()) });
      o.onPace?.(perSecond);
    }
  } finally {
    poster.close();
  }
  return { points: points.sort((a, b) => a.gap - b.gap), referenceGap: typicalGap(o.hopPerSecond) };
}
