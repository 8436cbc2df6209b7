// The replay thread behind the dashboard. The replay's driver sends requests on timers: on the
// thread that draws the dashboard, every redraw would delay the sends due meanwhile, and the
// latency measured from the intended send would include the dashboard's own cost. So the whole
// replay (world, services, stack, measured window, cleanup) runs here, posting what the live view
// shows as the simulation thread does (sim-worker.ts): preparation progress, each policy's start, a
// snapshot per series interval, each finished result. A stop is the same shared flag (its first
// slot, the minute, non-zero: the replay stops whatever the minute).
import { parentPort, workerData } from 'node:worker_threads';
import { InfrastructureError, InputError } from '../../sim/errors.js';
import type { FiredEvent } from '../../sim/model/metrics.js';
import type { MinuteSnapshot } from '../../sim/model/simulation.js';
import { ScenarioError } from '../../sim/run-scenario.js';
import { seriesIntervalSeconds } from '../../sim/replay/mapping.js';
import { runReplay, type ReplayInput } from '../replay/session.js';
import type { LiveMessage } from './state.js';
import { StopFlag } from './stop-flag.js';

function main(): void {
  const port = parentPort;
  if (!port) throw new Error('replay-worker runs as a worker thread');
  const { input, stop } = workerData as { input: ReplayInput; stop: SharedArrayBuffer };
  const flag = new StopFlag(stop);
  const aborter = new AbortController();
  const poll = setInterval(() => {
    if (flag.requested()) aborter.abort();
  }, 100);
  const post = (m: LiveMessage) => port.postMessage(m);
  let fraction = 0;
  let detail = '';
  const prepare = (f: number, d: string) => {
    fraction = f;
    detail = d;
    post({ type: 'prepare', fraction, detail });
  };
  const m = input.mapping;
  const interval = seriesIntervalSeconds(m.timeScale);
  let baseline = 0;
  let peak = 0;
  let fired: FiredEvent[] = [];

  runReplay(input, {
    log: (line) => prepare(fraction, line),
    progress: (label) => ({ update: (f, d) => prepare(f, `${label} ${d}`), done: (d) => prepare(1, `${label} done${d ? `: ${d}` : ''}`) }),
    onStart: (index, policy, wallSeconds, baselineUsedMemory) => {
      baseline = baselineUsedMemory;
      post({ type: 'start', index, policy, durationSeconds: wallSeconds, intervalSeconds: interval });
    },
    onInterval: (index, bucket, sample) => {
      const at = bucket.endMs / 1000;
      const snapshot: MinuteSnapshot = {
        minute: bucket.index,
        atSeconds: at,
        durationSeconds: m.wallSeconds,
        postsPerSecond: bucket.posts.completedPerSecond,
        writesPerSecond: sample.writesPerSecond,
        readsPerSecond: bucket.reads.completedPerSecond,
        backlogWrites: sample.backlogEvents,
        lagP99Seconds: sample.lagP99Seconds,
        readP99Ms: bucket.reads.p99Ms,
        memoryBytes: sample.usedMemory - baseline,
        soFar: { followerLagP99Seconds: sample.followerLagP99SoFar, readP99Ms: bucket.reads.p99SoFarMs, peakMemoryBytes: (peak = Math.max(peak, sample.usedMemory - baseline)) },
        events: fired.filter((e) => e.at <= at),
      };
      post({ type: 'minutes', index, snapshots: [snapshot] });
    },
    onFinished: (index, result) => post({ type: 'finished', index, result }),
    onEvents: (events) => (fired = events),
    signal: aborter.signal,
  }).then(
    () => {
      clearInterval(poll);
      post({ type: 'done' });
    },
    (err) => {
      clearInterval(poll);
      const isInput = err instanceof ScenarioError || err instanceof InputError;
      const message = err instanceof InputError ? err.line() : err instanceof Error ? err.message : String(err);
      post({ type: 'error', input: isInput, infrastructure: err instanceof InfrastructureError, message, stack: err instanceof Error ? err.stack : undefined });
    },
  );
}

main();
