// Progress on stderr while calibrate measures: what is being measured, the share done and an ETA,
// from each step's expected seconds (its rounds times a round's length, from the settings table).
import { roundCount, type Rounds } from './rounds.js';
import { CALIBRATE } from './settings.js';
import { postsPerSecond } from './worker-by-size.js';
import { bySizeAuthors } from './world.js';
import { curvePaces, idleCurveOutOfReach, postsAtPace } from './statements-by-idle.js';

type Show = (fraction: number, detail: string) => void;

/**
 * From a block's last post to the running worker's figures of it: the relay's poll, the last
 * fan-out, the figures asked for (worker-stages.ts). 43 s for the by-size phase at --samples 2,
 * 40.6 s of it posting (2026-12-06).
 */
const FIGURES_SECONDS = 0.5;

/** The steps calibrate takes and roughly how long each lasts (s): what the ETA is made of. */
export function expectedSeconds(samples: number, selfContained: boolean): Record<string, number> {
  const r = roundCount({ samples, warmup: CALIBRATE.warmupRounds });
  const a = CALIBRATE.api;
  const shapes = CALIBRATE.world.pulledShapes.length + a.pageSizes.length - 1;
  const p = CALIBRATE.postToLog;
  const bySize = CALIBRATE.workerBySize;
  return {
    world: selfContained ? 6 : 1,
    rtt: r * 0.05,
    'timeline writes': 3 + r * 0.2,
    'page reads': r * 0.2,
    expansion: r * 0.3 * CALIBRATE.expansion.pagesPerSample,
    'event statements': r * (0.1 + (CALIBRATE.eventStatements.perSample * CALIBRATE.pace.meanGapMs) / 1000),
    rebuild: r * (0.2 + (CALIBRATE.rebuild.perSample * CALIBRATE.pace.meanGapMs) / 1000),
    ...(selfContained
      ? {
          'API CPU': r * shapes * ((a.settleMs + a.sampleMs) / 1000 + 0.05) + r * (CALIBRATE.network.sampleMs + CALIBRATE.spread.readsPerSample * (CALIBRATE.pace.meanGapMs + 1) + CALIBRATE.spread.quietMs + 100) / 1000,
          'post to log': r * (p.postsPerSample / p.perSecond) + p.relaySettleMs / 1000,
          // each pace's posts, then the worker's figures, asked for once they are handled
          // (none when the samples are too few for a sound curve: calibrate does not post them)
          'statements by idle': idleCurveOutOfReach(samples) !== null ? 0 : curvePaces().reduce((sum, perSecond) => sum + postsAtPace(samples, perSecond) / perSecond + FIGURES_SECONDS, 0),
          // each size's posts (the large ones paced slower), then the worker's figures
          // (the pace without a write cost: the busy share needs the batch fit, measured by then)
          'worker by size': bySize.followers.reduce((sum: number, f) => sum + (samples * bySize.postsPerSample) / postsPerSecond(f, bySizeAuthors(f), 0) + FIGURES_SECONDS, 2 * FIGURES_SECONDS),
          'API writes': r * (CALIBRATE.writes.settleMs + CALIBRATE.writes.sampleMs) / 1000,
        }
      : { 'post to log': 0.5 }),
  };
}

export class Steps {
  private readonly total: number;
  private done = 0;

  constructor(
    private readonly expected: Record<string, number>,
    private readonly show: Show,
    private readonly log: (line: string) => void,
    private readonly base: Pick<Rounds, 'samples' | 'warmup' | 'signal'>,
  ) {
    this.total = Object.values(expected).reduce((a, b) => a + b, 0);
  }

  /** A step begins: said once, then the progress line moves with its rounds (`passes` sets of them, or `rounds` when given). */
  begin(step: string, detail: string, passes = 1, rounds = roundCount(this.base) * passes): Rounds {
    const weight = this.expected[step] ?? 0;
    const start = this.done;
    let round = 0;
    this.log(detail);
    this.show(start / this.total, step);
    this.done += weight;
    return {
      ...this.base,
      log: this.log,
      onRound: () => {
        round++;
        this.show((start + (weight * round) / rounds) / this.total, `${step} (round ${round} of ${rounds})`);
      },
    };
  }

  /** A step without rounds (loading the world, filling timelines) is done. */
  finish(step: string): void {
    this.show(this.done / this.total, step);
  }
}
