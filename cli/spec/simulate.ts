// The simulator's commands: run, sweep, plan, report, estimate.
import { DEFAULT_GROWTH, DEFAULT_HEADROOM, DEFAULT_SAMPLES } from '../../sim/plan/inputs.js';
import { command } from './command-spec.js';
import { DASHBOARD_OPTIONS, SCENARIO_OPTIONS, THRESHOLD_OPTIONS } from './options.js';

const SCENARIO_ARG = { name: '<scenario>', help: 'a scenario file (scenarios/*.yaml)' };

const POLICY_HELP = 'push | pull | threshold:T | rate | reader-cap:N | adaptive:T, optionally :skip-dormant or :all-followers';

export const RUN_OPTIONS = {
  ...SCENARIO_OPTIONS,
  policy: { type: 'string', arg: 'P', short: 'p', help: POLICY_HELP },
  ...THRESHOLD_OPTIONS,
  ...DASHBOARD_OPTIONS,
} as const;

export const run = command({
  name: 'run',
  summary: 'simulate a scenario: fan-out lag, writes/s, Redis memory, read latency, SLOs',
  args: [SCENARIO_ARG],
  options: RUN_OPTIONS,
  notes: `Exit 1 when a threshold of slo.thresholds fails (unless --no-thresholds), or with --check when an
SLO or a threshold fails; the reason goes to stderr.

On a terminal (and not under CI, --json or --quiet) the run is shown on a live dashboard; q or
Ctrl-C stops it at the current simulated minute, writes the partial report and exits 130.`,
  examples: [
    ['feedlab run scenarios/celebrity-burst.yaml', 'the World Cup burst under its policy'],
    ['feedlab run scenarios/steady-state.yaml -p push --set infrastructure.fanoutWorkers=16 -o out/', 'a what-if, with reports in out/'],
  ],
  run: async () => (await import('../commands/run.js')).run,
});

export const SWEEP_OPTIONS = {
  ...SCENARIO_OPTIONS,
  policies: { type: 'string', arg: 'P1,P2,...', help: "the policies to simulate (default: the scenario's sweep.policies)" },
  threads: {
    type: 'string',
    arg: 'N',
    help: "simulate up to N policies at once, each on a worker thread over one shared copy of the graph, and generate a large graph on up to N threads (default: the machine's cores; 1: one after another). The documents are the same whatever N",
  },
  ...THRESHOLD_OPTIONS,
  ...DASHBOARD_OPTIONS,
} as const;

export const sweep = command({
  name: 'sweep',
  summary: 'simulate several fan-out policies and recommend the cheapest that meets every SLO',
  args: [SCENARIO_ARG],
  options: SWEEP_OPTIONS,
  notes: `The recommendation is the cheapest policy that meets every SLO and threshold. Exit 1 when no
policy meets every threshold of slo.thresholds (unless --no-thresholds), or with --check when none
meets every SLO and threshold (no recommendation); the reason goes to stderr.

The policies run in parallel, one per core (--threads). On a terminal (not under CI, --json, --quiet
or --no-dashboard) a live dashboard charts the lowest-numbered policy running and shows every other's
progress in its row; q or Ctrl-C stops the policy charted at the minute shown (a policy running beside
it is not run), reports the policies finished and exits 130.`,
  examples: [
    ['feedlab sweep scenarios/threshold-sweep.yaml', "the scenario's own list of policies"],
    ['feedlab sweep scenarios/celebrity-burst.yaml --policies push,threshold:10000,pull -o sweep/', 'three policies'],
  ],
  run: async () => (await import('../commands/sweep.js')).run,
});

const { json: _json, out: _out, check: _check, quiet: _quiet, ...PLAN_SCENARIO } = SCENARIO_OPTIONS;

export const PLAN_OPTIONS = {
  ...PLAN_SCENARIO,
  growth: { type: 'string', arg: 'G', help: `multiply the users (so posts/s, reads/s, timelines) by G (default ${DEFAULT_GROWTH}: today's load)` },
  headroom: { type: 'string', arg: 'H', help: `keep this share of every resource spare at the peak (default ${DEFAULT_HEADROOM})` },
  samples: { type: 'string', arg: 'N', help: `draws of the scenario's [low, likely, high] intervals (default ${DEFAULT_SAMPLES})` },
  json: { type: 'boolean', help: 'print the plan document (feedlab.plan/1) on stdout' },
  out: SCENARIO_OPTIONS.out,
  check: { type: 'boolean', help: 'exit 1 when no plan meets every objective within the limits' },
  threads: {
    type: 'string',
    arg: 'N',
    help: "run the simulation checks at the p50 and the p95 at once, each on a worker thread over one shared copy of the graph, from 1,000 samples the samples' closed form in slices, and generate a large graph on up to N threads (default: the machine's cores; 1: all on this thread). The plan is the same whatever N",
  },
  ...THRESHOLD_OPTIONS,
  quiet: SCENARIO_OPTIONS.quiet,
} as const;

export const plan = command({
  name: 'plan',
  summary: 'a capacity plan: workers, Redis memory and shards, partitions, API instances, Postgres, with reasons',
  args: [SCENARIO_ARG],
  options: PLAN_OPTIONS,
  notes: `The plan sizes for the scenario's slo.fanoutLagP99, readP99 and redisMemory. Its thresholds
(slo.thresholds) size nothing: they are checked on the simulation check's runs of the planned fleet
(a threshold fails when it fails at any point checked), printed, in the JSON (check[].thresholds),
and a failed one exits 1 (unless --no-thresholds). --check exits 1 when the plan is not satisfied.
--junit writes the plan (satisfied or not) and each threshold as a JUnit test case.`,
  examples: [
    ['feedlab plan scenarios/plan-next-year.yaml', "next year's fleet, each resource with its reason"],
    ['feedlab plan scenarios/steady-state.yaml --growth 3 --headroom 0.4 -o plan/', 'three times the users'],
  ],
  run: async () => (await import('../commands/plan.js')).run,
});

export const REPORT_OPTIONS = {
  out: { type: 'string', arg: 'DIR', short: 'o', help: "where to write report.json, report.md and report.html (default: the document's directory)" },
} as const;

export const report = command({
  name: 'report',
  summary: 'render a saved report.json (run, sweep, plan or compare) again as report.md and a self-contained report.html',
  args: [{ name: '<document>', help: 'a document written by feedlab run, sweep, plan or compare (--json or --out)' }],
  options: REPORT_OPTIONS,
  notes: 'Never replaces another document: a report.json of another run beside the document needs --out.',
  examples: [
    ['feedlab report out/report.json', 'out/report.md and out/report.html again'],
    ['feedlab run scenarios/steady-state.yaml --json > r.json && feedlab report r.json -o r/', 'reports of a saved --json'],
  ],
  run: async () => (await import('../commands/report.js')).run,
});

/** Timelines written by estimate --measure: enough for used_memory to rise well above its noise. */
export const MEASURE_TIMELINES = 1000;

export const ESTIMATE_OPTIONS = {
  preset: { type: 'string', arg: 'NAME', help: "a design document's numbers (--list shows them)" },
  set: { type: 'string', arg: 'NAME=VALUE', multiple: true, help: 'change one input (--inputs lists them); sizes take MB/GB, times ms/s/d; repeatable' },
  explain: { type: 'boolean', help: 'each figure as formula, numbers, result' },
  json: { type: 'boolean', help: 'print the feedlab.estimate/1 document' },
  list: { type: 'boolean', help: 'list the presets' },
  inputs: { type: 'boolean', help: 'list the inputs with their defaults' },
  measure: {
    type: 'boolean',
    help: 'write timelines of the configured shape to Redis (REDIS_URL) under a scratch prefix, read MEMORY USAGE and INFO memory, print them beside the model, remove every key',
  },
  timelines: { type: 'string', arg: 'N', help: `how many timelines --measure writes (default ${MEASURE_TIMELINES})` },
  quiet: { type: 'boolean', short: 'q', help: 'no progress on stderr' },
} as const;

export const estimate = command({
  name: 'estimate',
  summary: "the documents' back-of-envelope math, reproduced and explained step by step",
  args: [{ name: '[scenario]', help: "a scenario file whose inputs the math takes (default: the documents' own)" }],
  options: ESTIMATE_OPTIONS,
  examples: [
    ['feedlab estimate --explain', "the documents' figures, each as formula, numbers and result"],
    ['feedlab estimate scenarios/celebrity-burst.yaml --set timeline.cap=400', "a scenario's inputs, one changed"],
  ],
  run: async () => (await import('../commands/estimate.js')).run,
});
