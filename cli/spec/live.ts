// The commands that measure the live stack: replay, calibrate, compare.
import { DEFAULT_STREAM_PREFIX } from '../../core/service-url.js';
import { CALIBRATE } from '../calibrate/settings.js';
import { command } from './command-spec.js';
import { DASHBOARD_OPTIONS, SCENARIO_OPTIONS, THRESHOLD_OPTIONS } from './options.js';

/** How a replay maps onto this machine: replay and compare SCENARIO take the same three. */
const MAPPING_OPTIONS = {
  users: { type: 'string', arg: 'N', help: 'accounts of the live graph (default: replay.users, else graph.generate.users)' },
  'time-scale': { type: 'string', arg: 'X', help: 'simulated seconds per wall second (default: replay.timeScale, else 1)' },
  workers: { type: 'string', arg: 'N', help: 'fan-out worker processes (default: replay.workers, else infrastructure.fanoutWorkers; at most one per core)' },
} as const;

/** Where a running deployment keeps its data, for --target. */
const TARGET_PLACES = {
  schema: { type: 'string', arg: 'S', help: 'with --target: its Postgres schema (default public)' },
  'key-prefix': { type: 'string', arg: 'P', help: 'with --target: its cache key prefix (default none)' },
  'stream-prefix': { type: 'string', arg: 'P', help: `with --target: its event log's prefix (default ${DEFAULT_STREAM_PREFIX})` },
} as const;

export const REPLAY_OPTIONS = {
  ...SCENARIO_OPTIONS,
  json: { type: 'boolean', help: 'print the result document (feedlab.result/1, source replay; feedlab.sweep/1 for --policies)' },
  policy: { type: 'string', arg: 'P', short: 'p', help: 'one policy' },
  policies: {
    type: 'string',
    arg: 'P1,P2,...',
    help: "a live sweep: the same schedule once per policy from the same starting state (default: replay.policies when the scenario has them, else its policy section)",
  },
  ...MAPPING_OPTIONS,
  target: {
    type: 'string',
    arg: 'URL',
    help: 'replay against a running deployment (its REDIS_URL and DATABASE_URL, FEED_TOKEN_SECRET, and --schema, --key-prefix, --stream-prefix where it uses other than the defaults)',
  },
  'no-load': { type: 'boolean', help: 'with --target: the graph is already loaded' },
  replace: { type: 'boolean', help: 'with --target: replace the users, follows and posts its tables hold' },
  ...TARGET_PLACES,
  max: { type: 'boolean', help: "only measure the server's closed-loop maximum read rate (feedlab's client and autocannon)" },
  ...THRESHOLD_OPTIONS,
  ...DASHBOARD_OPTIONS,
} as const;

export const replay = command({
  name: 'replay',
  summary: 'drive the reference server with a scenario and measure fan-out lag, Redis memory and p99 latency for real',
  description: `Replays the scenario's seeded workload (the arrival schedule \`feedlab run\` simulates) against the
reference server and measures it: fan-out lag per post and per follower, timeline writes per second
at Redis, Redis memory by key class beside the simulator's model, read latency from the intended
send time (open model), Redis commands per read, CPU per process. Self-contained by default: a
scratch schema and key prefix on this machine's Redis and Postgres (REDIS_URL, DATABASE_URL),
\`feedlab serve\` and \`feedlab worker\` started and stopped, everything removed at the end (also on
Ctrl-C, q, or a crash).`,
  args: [{ name: '<scenario>', help: 'a scenario file (its replay: section maps it onto this machine)' }],
  options: REPLAY_OPTIONS,
  notes: `A mapping this machine cannot carry (more feed reads/s than the server sustains, a graph that does
not fit) is refused in one line with the largest that fits (exit 2). q or Ctrl-C stops the window,
writes the partial report and exits 130; a second Ctrl-C quits after cleaning up.`,
  examples: [
    ['feedlab replay scenarios/celebrity-burst.yaml -o replay/', 'the burst on the live stack, about five minutes'],
    ['feedlab replay scenarios/threshold-sweep.yaml --policies push,pull', 'a live sweep of two policies'],
  ],
  run: async () => (await import('../commands/replay.js')).run,
});

export const CALIBRATE_OPTIONS = {
  out: { type: 'string', arg: 'FILE', short: 'o', help: 'the calibration file (default calibration.yaml), written to a temporary name and renamed' },
  samples: { type: 'string', arg: 'N', help: `samples of every figure after its warm-up (default ${CALIBRATE.samples})` },
  json: { type: 'boolean', help: 'print the document (feedlab.calibration/1) on stdout instead of the table' },
  quiet: { type: 'boolean', short: 'q', help: 'no progress on stderr' },
  target: {
    type: 'string',
    arg: 'URL',
    help: 'measure against a running deployment (its REDIS_URL and DATABASE_URL; read only but for lists of its own under a scratch key prefix, removed after): Redis and Postgres costs on its rows, the post-to-log hop from its event log; the API tier is refused',
  },
  ...TARGET_PLACES,
  'key-prefix': { type: 'string', arg: 'K', help: 'with --target: its cache key prefix (default none), where its workers publish their stages' },
} as const;

export const calibrate = command({
  name: 'calibrate',
  summary: "measure the live stack's costs into a calibration file the simulator uses",
  description: `Measures the costs the simulator charges, on this machine's Redis and Postgres (REDIS_URL,
DATABASE_URL), each after a warm-up and as several samples with their spread: the Redis round trip;
a pipelined batch of timeline writes against its size; a page read and an MGET per key; a follower
page from Postgres against its rows; the worker's statements per post event, and after idle times;
a timeline rebuild; the API server's CPU per feed page and per post, the network hop and the spread
of a read's service time; the hop from a post to its event in the event log, and a running worker's
own stages. Self-contained by default: a scratch database, key prefix and event log, \`feedlab serve\`
and one \`feedlab worker\` started, all removed at the end (also on Ctrl-C or a crash). About seven minutes (6 m 47 s on a 2-core VM, 2026-12-06).`,
  options: CALIBRATE_OPTIONS,
  notes: `Apply the file with \`calibration: FILE\` in a scenario (keys the scenario writes win) or --calibration FILE
on run, sweep, plan and replay (wins over both). A number that is not sound (a fit with a slope <= 0 or
r² under 0.9 whose line leaves a size's p10-p90, a cost <= 0; the API's CPU lines get as many samples
again first) is refused in one
line and left out of the file: exit 1 (a figure that cannot be measured here, such as a target's API
tier, is said in one line and left out: exit 0).
Exit 2 on bad usage, 3 when Redis or Postgres is unreachable, 130 when stopped (nothing written).`,
  examples: [
    ['feedlab calibrate', 'this machine, into calibration.yaml'],
    ['feedlab run scenarios/celebrity-burst.yaml --calibration calibration.yaml', 'a simulation with the measured costs'],
  ],
  run: async () => (await import('../commands/calibrate.js')).run,
});

export const DEFAULT_SEEDS = 3;
export const DEFAULT_RUNS = 2;

/** The options only `compare SCENARIO` takes (two documents refuse them). */
export const COMPARE_SCENARIO_OPTIONS = {
  policies: { type: 'string', arg: 'P1,...', help: 'the policies compared (default: replay.policies, else the policy section)' },
  seeds: { type: 'string', arg: 'N', help: `simulations per policy, each with the model's draws seeded anew (default ${DEFAULT_SEEDS})` },
  runs: { type: 'string', arg: 'N', help: `replays (default ${DEFAULT_RUNS}; each replays every policy)` },
  replays: { type: 'string', arg: 'A,B', help: 'saved replay documents (feedlab replay --json or report.json) instead of replaying' },
  calibration: {
    type: 'string',
    arg: 'A,B',
    help: "the costs the simulation runs with: a calibration file, or several (each simulated --seeds times, their spread part of the simulated side's; paired with the replays in their order, the last with any past them); without it (and without the scenario's own calibration: key), feedlab calibrate runs just before each replay (about five minutes each)",
  },
  calibrations: { type: 'string', arg: 'N', help: 'without --calibration: how many times feedlab calibrate runs, each just before a replay (default: one a replay, --runs; with --replays, 1, run now)' },
  'no-calibrate': { type: 'boolean', help: "simulate with the scenario's costs as they are" },
  'replay-stages': {
    type: 'boolean',
    help: "simulate with the stages each replay measured in place of its calibration's (the post-to-log hop, the worker's statement, pickup and first page, a post's writes, the server's own read spread) as the simulated side: whether the model adds the replay's own stages up to its figures (without it, the same simulations only say whose each gap is)",
  },
  ...MAPPING_OPTIONS,
  quiet: { type: 'boolean', short: 'q', help: 'no progress on stderr' },
} as const;

export const COMPARE_OPTIONS = {
  json: { type: 'boolean', help: 'print the comparison (feedlab.compare/1) on stdout' },
  out: { type: 'string', arg: 'DIR', short: 'o', help: 'write DIR/report.json (the comparison), DIR/report.md and a self-contained DIR/report.html' },
  check: { type: 'boolean', help: 'exit 1 when any figure is outside 15% of the measured value and outside the noise' },
  ...COMPARE_SCENARIO_OPTIONS,
} as const;

export const compare = command({
  name: 'compare',
  summary: 'the estimate, the calibrated simulation and the replay of one scenario side by side, or two result documents',
  description: `feedlab compare SCENARIO: the estimate, the calibrated simulation and the replay of one scenario,
on this machine. The scenario is replayed on the live stack (feedlab replay, --runs times, or the
documents of earlier replays with --replays), the very world the replay ran is simulated with the
calibrated costs and the replayed schedule (--seeds times for each calibration), and the design
documents' estimate is worked with that world's inputs. Without a calibration, this machine is
calibrated just before each replay: its costs drift within the hour, so the simulated side's spread
holds the calibrations' as the measured side's holds the replays'.

feedlab compare A.json B.json: two saved documents held against each other: A the simulated side
(feedlab run or sweep), B the measured side (feedlab replay, or any result or sweep).`,
  args: [{ name: '<inputs...>', help: 'a scenario file, or two result documents (simulated, then measured)' }],
  options: COMPARE_OPTIONS,
  notes: `For every policy both sides have (a sweep's runs are paired by policy), each figure's simulated and
measured value, their ratio (simulated / measured), the noise (the spread of each side's documents)
and a verdict: within 15%, inside the noise, outside, or n/a where a side does not measure or model
it. Lags: fan-out lag per follower (lag_p50, lag_p99, lag_max) and per post; writes/s mean and peak;
Redis memory, in total and by key class; read p50 and p99; Redis commands per read. With a scenario,
the same simulations run again with each replay's own stages in place of the costs, and a figure
outside says whose gap it is: the costs' (with the replay's stages it lands), the model's (it stays
outside), or open (it hangs on costs the replays' stages leave calibrated).`,
  examples: [
    ['feedlab compare scenarios/celebrity-burst.yaml -o compare/', 'calibrate and replay, twice, then simulate each calibration three times: about 25 minutes'],
    ['feedlab compare sim/report.json live/report.json', 'a simulation held against a replay'],
  ],
  run: async () => (await import('../commands/compare.js')).run,
});
