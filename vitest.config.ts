import { defineConfig } from 'vitest/config';

// Three groups, one after the other. The simulator, the reports and the command line on the
// simulator share the two cores first. Then the server's parts on this machine's Redis and Postgres,
// two files at a time: each in its own schema and key prefix, and none measures the machine. Last,
// what measures the machine (replays, calibrations, the load generator, Redis's memory), one file at
// a time with nothing beside it. 2026-12-06: the suite took 1,096 s with the server's parts in the
// last group, .ci/run 1,162 s of its 1,200.
const SERVICES = [
  // the server's parts (not test/server/*.test.ts: the image build and the Compose file's check)
  'test/server/*/**/*.test.ts',
];
const MEASURING = ['test/sim/replay/**/*.test.ts', 'test/cli/replay.test.ts', 'test/cli/compare-cycle.test.ts', 'test/cli/calibrate.test.ts', 'test/estimate/measure.test.ts'];
const ALL = ['test/**/*.test.ts', 'test/**/*.test.tsx'];

const shared = { testTimeout: 120_000, hookTimeout: 120_000, pool: 'forks' as const };

export default defineConfig({
  test: {
    projects: [
      { test: { ...shared, name: 'simulator', include: ALL, exclude: [...SERVICES, ...MEASURING], maxWorkers: 2, sequence: { groupOrder: 0 } } },
      { test: { ...shared, name: 'services', include: SERVICES, maxWorkers: 2, sequence: { groupOrder: 1 } } },
      { test: { ...shared, name: 'live stack', include: MEASURING, maxWorkers: 1, sequence: { groupOrder: 2 } } },
    ],
  },
});
