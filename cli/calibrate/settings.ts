// Every setting of `feedlab calibrate`, one table: the world it measures on, and for each figure how
// many operations make one sample and how long a sample lasts. A figure is `samples` samples
// (--samples) after `warmupRounds` rounds thrown away (the first fan-out runs JIT-cold at about
// twice the time); the samples of a fit's sizes are taken in interleaved rounds, so that a drift of
// the machine spreads over every size instead of bending the line. (What makes a number unsound is
// in sim/calibration/document.ts.)
import { SPREAD_REFERENCE_PAGE } from '../../sim/model/api-tier.js';

export const CALIBRATE = {
  /** Samples of every figure (--samples), and the rounds thrown away before them. */
  samples: 5,
  warmupRounds: 1,
  /** The calibration world: users following authors of every size the fits need, posts within the lease. */
  world: {
    seed: 11,
    /** Users who follow the expansion authors (every one seen now, so rows = followers). */
    audience: 10_000,
    /** One author per follower count: the expansion fit's sizes. */
    expansionFollowers: [10, 30, 100, 300, 1_000, 3_000, 10_000],
    /** Authors whose posts fill the readers' timelines, each with postsPerAuthor posts of the last day. */
    authors: 200,
    postsPerAuthor: 20,
    /** Each reader follows this many of them (a rebuild merges their posts, capped at the timeline cap). */
    readerFollows: 50,
    /** Accounts pulled at read time (their users.follower_count over every threshold), each with posts. */
    celebrities: 16,
    celebrityPosts: 100,
    celebrityFollowerCount: 10_000_000,
    /**
     * Readers of each shape: the number of pulled followees a page merges. Up to 16: over 0-8 the
     * full lists' rise (about 200 us) was near the samples' spread, and the fit came out at r² 0.899
     * in one calibration (2026-12-03 15:28), refused, and the API tier's base with it.
     */
    pulledShapes: [0, 2, 4, 8, 16],
    readersPerShape: 100,
    /**
     * Pulled accounts without a post (their lists empty), and readers following 1-32 of them: against
     * the full lists, what a list costs the API by itself and per entry it returns. Up to 32: an empty
     * list costs tens of us, and with 1-8 of them (2026-12-03) the fit's rise was inside the CPU
     * clock's noise (r² 0.79), so the split was refused.
     */
    quietCelebrities: 32,
    quietShapes: [1, 4, 16, 32],
  },
  /** A sample of the round trip: the median of this many PINGs, one at a time. */
  rtt: { pingsPerSample: 200 },
  /** Timeline writes: one batch of each size per round, into timelines filled to the cap. */
  timelineWrites: { batchSizes: [1, 10, 100, 300, 1_000, 3_000] },
  /** Page reads and MGETs of a page's bodies, per sample (commandstats over them); reads of each slice (entries returned) for the fit. */
  pageReads: { perSample: 200, slices: [1, 5, 25] },
  /** Follower pages: a sample of an author is the median of this many reads (the large pages' noise moves the intercept). */
  expansion: { pagesPerSample: 3 },
  /** The worker's statements of this many events per sample; this many rebuilds per sample. */
  eventStatements: { perSample: 40 },
  rebuild: { perSample: 20 },
  /**
   * API CPU: closed loops of `connections` for `sampleMs` (after `settleMs`) per shape, the page
   * sizes of the posts fit; a line refused for scatter is measured again, `retrySets` times at most.
   */
  api: { connections: 2, settleMs: 100, sampleMs: 450, retrySets: 1, pageSizes: [5, 20, 50], pulledAt: SPREAD_REFERENCE_PAGE.pulled, pageSizeAt: SPREAD_REFERENCE_PAGE.posts },
  /** POST /v1/posts in a closed loop, per sample. */
  writes: { connections: 2, settleMs: 100, sampleMs: 450 },
  /** GET /healthz one at a time, per sample. */
  network: { sampleMs: 250 },
  /**
   * The idle gap, exponential with this mean, left between operations whose latency is measured
   * (the spread's reads, a post event's statements, a rebuild): a replay's requests and events come
   * tens of milliseconds apart, and a process woken from idle answers slower than one kept busy.
   */
  pace: { meanGapMs: 25 },
  /**
   * Reads one at a time, paced, for the service-time spread: this many per sample; then the server
   * left alone this long, for its CPU with no request (its timers' 7-10 ms a second, 2026-12-05;
   * read from the scheduler's run time, sim/replay/cpu.ts, where the 10 ms ticks had read 4-100 ms
   * a second and once took more than the paced reads themselves). A second a sample.
   */
  spread: { readsPerSample: 150, quietMs: 1000 },
  /**
   * Posts sent at random (Poisson) times, per sample, at this rate (a replay's pace); then the event
   * log read. A fan-out worker takes them meanwhile (its stages). 150 a sample, 750 in all: the p99
   * is the 8th largest. With 300 it was the 3rd, and it came out at 45, 26 and 22 ms in three
   * calibrations within two hours (2026-12-04) where the replays between them measured 14-17 ms over
   * 1,842 posts each.
   */
  // posted by the authors with at most `maxFollowers` (a fan-out of a few ms), so the worker is idle
  // when nearly every event arrives: its pickup is the wake-up the model charges, not a wait behind
  // the post before (with the ordinary authors' ~225 followers the mean came out 2.15 ms, p99 21 ms)
  postToLog: { postsPerSample: 150, perSecond: 10, relaySettleMs: 1_500, maxFollowers: 30 },
  /**
   * A running worker's statement by its idle time before an event (statements-by-idle.ts): posts by
   * the hop's authors at each of these paces a second and at the hop's own, this many per sample
   * (--samples) at each: 80 at the default 5, 32 s at 2.5 a second, but no pace longer than
   * `maxSecondsPerPace` (50 posts at 1 a second, a margin over the 40 a point is taken from,
   * MIN_IDLE_POINT_EVENTS). A replay's workers take 2.5-4 events a second each, so a quarter of their
   * gaps are over half a second, where the statement still grows: a one-row prepared SELECT at
   * Poisson paces took p50 1.0 ms at 4 a second, 1.59 at 2.5 and 1.76 at 1 (2026-12-04, a probe
   * process beside no load), and a replay's workers 1.43 ms at about 2.5 a second each.
   */
  statementsByIdle: { perSecond: [40, 20, 5, 2.5, 1], postsPerSample: 16, maxSecondsPerPace: 50 },
  /**
   * A running worker's first page and writes against the followers of a post: for each size, posts by
   * an author whose followers all have timelines filled to the cap (the write fit's targets), at
   * random times, then the worker's own histograms of those posts (the median a point). One block a
   * size, since a worker's figures are read only when it publishes (asked for once the size's posts
   * are handled). Its lanes and event loop are what the replays' workers spend (calibrate's one
   * batch at a time put a post of 20-40 followers at 0.72-0.82 ms where the replays' workers took
   * 1.75-1.91 ms, 2026-12-03). Posted at `perSecond`, slower where a post's writes would keep the
   * worker busy more than `busyShare` of the time (timed by the batch fit), so that a post rarely
   * waits for the one before.
   * `postsPerSample` posts of each size per sample (--samples): 40 at the default 5. A size's posts go
   * round authors with disjoint audiences (all the write targets: 300 authors of 10 followers, 3 of
   * 1,000), so a post's timelines are not the ones the post before wrote, as in a replay: Redis
   * spent 18 us a script on one author's posts of each size where the replays' windows read 32 us
   * (2026-12-05), and writing 400 of 5,000 timelines at random took it 15.6-16.5 us a script
   * against 11.1-12.0 us for the same 400 again and again.
   * The posts of `spreadFrom` followers or more (their writes more than a round trip) give how a
   * post's writes scatter about the line (costs.eventWritesSpread): each size's posts as ratios to
   * its median, pooled (worker-by-size.ts pooledSpread). A replay's posts beyond 30 followers took 1.4-1.7x the line
   * (medians by size class; single posts up to 2.5x), one at a time, the slowest with up to 12 ms of
   * the worker's garbage collection inside (2026-12-05), where the line's medians put every post on it.
   * A size's posts come back to an author's timelines every `revisitSeconds` on average (Poisson
   * times round its authors: 3 authors at 0.6 a second come back within 2.5 s one time in five), as a
   * replay's do every 10-15 s (a reader of 100 followees): Redis writes a timeline it wrote
   * a second before faster than one it wrote seconds ago. By hand (2026-12-06, the worker's script
   * piped into 20,000 timelines of 800, 1,000 a post, Redis's own time a script): the same 3,000
   * timelines round robin at 4 posts a second (each again after 0.75 s) 15.3 and 20.7 us, at 0.5 a
   * second (after 6 s) 20.4 and 24.3 us, 1,000 drawn at random from the 20,000 at 4 a second
   * (after about 5 s) 22.5 and 22.0 us. Round robin at 4 a second, the 1,000-follower posts had made
   * the line's slope a warm timeline's, where a replay's large posts write cold ones. (How many other
   * timelines were written in between counts too: the random draws back to back came back within
   * about a second and took 21.8-27.3 us. The pacing covers the time only.)
   */
  workerBySize: { followers: [10, 30, 100, 300, 1_000], postsPerSample: 8, perSecond: 10, busyShare: 0.1, revisitSeconds: 5, spreadFrom: 30 },
  /** Target mode: scratch keys expire after this (a killed driver's leftovers go by themselves). */
  targetLeaseMs: 600_000,
} as const;
