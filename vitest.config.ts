import { defineConfig } from 'vitest/config';

// Tests that run the live stack (servers, workers, replays, calibrations on this machine's Redis and
// Postgres) measure the machine, so they run one file at a time, after the rest, with nothing else
// beside them. The others (the simulator, reports, the command line on the simulator) share the
// two cores first: 2026-12-03, the suite took 1,037 s one file at a time, of which 216 s were these.
const LIVE_STACK = [
  // the server's parts (not test/server/*.test.ts: the image build and the Compose file's check)
  'test/server/*/**/*.test.ts',
  'test/sim/replay/**/*.test.ts',
  'test/cli/replay.test.ts',
  'test/cli/compare-cycle.test.ts',
  'test/cli/calibrate.test.ts',
  'test/estimate/measure.test.ts',
];
const ALL = ['test/**/*.test.ts', 'test/**/*.test.tsx'];

const shared = { testTimeout: 120_000, hookTimeout: 120_000, pool: 'forks' as const };

export default defineConfig({
  test: {
    projects: [
      { test: { ...shared, name: 'simulator', include: ALL, exclude: LIVE_STACK, maxWorkers: 2, sequence: { groupOrder: 0 } } },
      { test: { ...shared, name: 'live stack', include: LIVE_STACK, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
});
