// The Postgres side of the fan-out and of cold reads, measured with the server's own repository and
// cache code from this process, as the worker and the read path run it (the statements of a post
// event and a rebuild each after an idle gap, CALIBRATE.pace, as a replay's come): a page of an author's
// followers (followersPage with the worker's dormancy filter and page size) against the rows it
// returns; a post event's statement before its fan-out (followerCount, as FanoutWorker.created sends
// it); a missing timeline rebuilt (rebuildTimeline, then TimelineCache.rebuild).
import { mean, median } from 'simple-statistics';
import type { TimelineCache } from '../../server/cache/timelines.js';
import type { FeedRepository } from '../../server/store/repository.js';
import { fitLine, SampleSet, spreadOf, type Fit, type Spread } from '../../sim/calibration/figures.js';
import { Rng } from '../../core/random.js';
import { sleep } from './pace.js';
import { inRounds, type Rounds } from './rounds.js';
import { CALIBRATE } from './settings.js';

/**
 * Each author's first follower page (page size `pageSize`, followers seen since `activeSinceMs`) a
 * few times per round, the authors in turn: a sample is the median wall time, against the rows.
 */
export async function measureExpansion(repo: FeedRepository, authors: readonly number[], pageSize: number, activeSinceMs: () => number, rounds: Rounds): Promise<Fit> {
  const walls = new SampleSet();
  await inRounds(rounds, async (keep) => {
    const times = new Map<number, number[]>();
    const rows = new Map<number, number>();
    for (let k = 0; k < CALIBRATE.expansion.pagesPerSample; k++) {
      for (const a of authors) {
        const since = activeSinceMs();
        const t0 = performance.now();
        const page = await repo.followersPage(a, null, pageSize, since);
        times.set(a, [...(times.get(a) ?? []), (performance.now() - t0) / 1000]);
        rows.set(a, page.ids.length);
      }
    }
    if (keep) for (const a of authors) walls.add(rows.get(a)!, median(times.get(a)!));
  });
  return fitLine(walls.byKey);
}

/**
 * A post event's statement before its fan-out, as FanoutWorker.created sends it: the author's
 * follower count (the list add and the pulled-mark lookup go beside the first page). A sample is
 * the mean of perSample events (authors in turn), each after an idle gap.
 */
export async function measureEventStatements(repo: FeedRepository, authors: readonly number[], rounds: Rounds): Promise<Spread> {
  const samples: number[] = [];
  const gaps = new Rng(CALIBRATE.world.seed + 1);
  let i = 0;
  await inRounds(rounds, async (keep) => {
    const times: number[] = [];
    for (let k = 0; k < CALIBRATE.eventStatements.perSample; k++) {
      await sleep(gaps.exponential(1 / CALIBRATE.pace.meanGapMs));
      const a = authors[i++ % authors.length];
      const t0 = performance.now();
      await repo.followerCount(a);
      times.push((performance.now() - t0) / 1000);
    }
    if (keep) samples.push(mean(times));
  });
  return spreadOf(samples);
}

/**
 * Missing timelines rebuilt as the read path rebuilds them: the recent posts of the followed pushed
 * authors within the lease (rebuildTimeline), written whole (TimelineCache.rebuild). Each is dropped
 * first; a sample is the mean of perSample rebuilds (readers in turn). Returns the entries rebuilt too.
 */
export async function measureRebuild(repo: FeedRepository, timelines: TimelineCache, readers: readonly number[], threshold: number, rounds: Rounds): Promise<Spread & { entries: number }> {
  const samples: number[] = [];
  const gaps = new Rng(CALIBRATE.world.seed + 2);
  let i = 0;
  let entries = 0;
  await inRounds(rounds, async (keep) => {
    const times: number[] = [];
    for (let k = 0; k < CALIBRATE.rebuild.perSample; k++) {
      const u = readers[i++ % readers.length];
      await timelines.drop(u);
      await sleep(gaps.exponential(1 / CALIBRATE.pace.meanGapMs));
      const t0 = performance.now();
      const r = await timelines.rebuild(u, () => repo.rebuildTimeline(u, Date.now() - timelines.shape.leaseMs, timelines.shape.cap, threshold));
      times.push((performance.now() - t0) / 1000);
      entries = Math.max(entries, r.entries);
    }
    if (keep) samples.push(mean(times));
  });
  return { ...spreadOf(samples), entries };
}
