// Every setting of a live replay, one table: how it loads, warms, checks, sends, probes, settles and
// measures. (What sim/replay decides on its own, the offered-peak window and the share of the
// measured maximum a schedule may offer, is in sim/replay/capacity.ts; the contended bound in
// sim/replay/result.ts.)
export const REPLAY = {
  /** Event-log partitions of the self-contained stack (the server's default). */
  partitions: 16,
  /** How long a service may take to start, migrations included. */
  startTimeoutMs: 60_000,
  /** Reads in flight during the warm pass. */
  warmConnections: 32,
  /** Concurrent direct rebuilds of dormant readers' timelines. */
  warmRebuildLanes: 8,
  /** The closed loop before the window: connections, how long (plain, and --max), warm-up, readers rotated. */
  saturation: { connections: 64, checkMs: 2_000, maxMs: 5_000, warmupMs: 500, readers: 2_000 },
  /** The driver: keep-alive connections, drop a request not sent within this, wait this for answers after the last send. */
  maxConnections: 256,
  dropAfterMs: 10_000,
  drainMs: 30_000,
  /** Share of ordinary posts probed (every pulled and every celebrity-burst post is). */
  probeShare: 0.25,
  /** Followers probed per pushed post, at random, plus the last ones by id (the worker's last batch). */
  probeFollowers: 6,
  lastBatchProbes: 3,
  probePollMs: 25,
  probeMaxPending: 20_000,
  /** A probed timeline not holding its post this long after creation counts as not delivered. */
  probeGiveUpMs: 60_000,
  /** After the window, how long the fan-out may take to drain (after a stop: stopSettleMs). */
  settleMaxMs: 120_000,
  stopSettleMs: 10_000,
  settlePollMs: 200,
  /** Commands per read: an idle window, then a reads-only window as long, at the run's mean read rate (at least this). */
  readsOnlyMs: 5_000,
  readsOnlyMinRate: 50,
  readsOnlyConnections: 64,
  /** How long to wait for the workers' figures after the settling: the stack's are asked for them (SIGUSR2), a target's publish every 5 s (server/worker/process.ts). */
  workerPublishWaitMs: 12_000,
  /** Postgres flushes its statistics views within a second. */
  statsFlushMs: 1_200,
  /** The wall time a replay window may take: at least, at most. */
  minWallSeconds: 5,
  maxWallSeconds: 7 * 86_400,
} as const;
