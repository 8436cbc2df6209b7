// The dashboard's simulation thread (dist/cli/dashboard/sim-worker.js, built by npm test) with its
// policies on two threads of their own: every policy's minutes arrive once and in order, and its
// result is the document the same policy gives alone; a stop ends the policy on screen at the
// minute shown and runs nothing more.
import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { policyFor, prepare, runPolicy } from '../../sim/run-scenario.js';
import { stringifyResult } from '../../sim/result.js';
import { parseScenario } from '../../sim/scenario/load.js';
import type { LiveMessage } from '../../cli/dashboard/state.js';
import { StopFlag } from '../../cli/dashboard/stop-flag.js';
import type { RunResult } from '../../sim/result.js';
import { ROOT } from '../cli/cli-helpers.js';
import { TINY, tinyPrepared } from './fixture.js';

const SIM_WORKER = join(ROOT, 'dist/cli/dashboard/sim-worker.js');
const SPECS = ['push', 'pull', 'threshold:25000'];

/** The thread's messages until 'done' (or an error); `onMessage` may set the stop flag meanwhile. */
function simulate(yaml: string, threads: number, onMessage?: (m: LiveMessage, stop: StopFlag) => void): Promise<LiveMessage[]> {
  const scenario = parseScenario(yaml, 'tiny.yaml');
  const policies = SPECS.map((s) => policyFor(scenario, s));
  const flag = new StopFlag();
  const worker = new Worker(SIM_WORKER, { workerData: { scenario, policies, stop: flag.buffer, threads } });
  const messages: LiveMessage[] = [];
  return new Promise((resolve, reject) => {
    worker.on('message', (m: LiveMessage) => {
      messages.push(m);
      onMessage?.(m, flag);
      if (m.type === 'error') reject(new Error(m.message));
      if (m.type === 'done') void worker.terminate().then(() => resolve(messages));
    });
    worker.on('error', reject);
  });
}

const finished = (messages: LiveMessage[]) => {
  const out = new Map<number, RunResult>();
  for (const m of messages) if (m.type === 'finished') out.set(m.index, m.result);
  return out;
};

describe("the dashboard's simulation thread, policies in parallel", () => {
  it('sends every minute of every policy once, in order, and the same documents as one policy alone', async () => {
    // twelve simulated hours: long enough that the second thread is up before the first policy ends
    const yaml = TINY.replace('duration: 20m', 'duration: 12h');
    const messages = await simulate(yaml, 2);
    const sc = parseScenario(yaml, 'tiny.yaml');
    const prepared = prepare(sc, tinyPrepared().graph);
    for (let i = 0; i < SPECS.length; i++) {
      const minutes = messages.flatMap((m) => (m.type === 'minutes' && m.index === i ? m.snapshots.map((s) => s.minute) : []));
      expect(minutes).toEqual(Array.from({ length: 720 }, (_, k) => k));
      expect(messages.filter((m) => m.type === 'start' && m.index === i)).toHaveLength(1);
      const alone = runPolicy(prepared, policyFor(sc, SPECS[i]));
      expect(stringifyResult(finished(messages).get(i)!)).toBe(stringifyResult(alone));
    }
    // two ran at once: the second started before the first finished
    const at = (pred: (m: LiveMessage) => boolean) => messages.findIndex(pred);
    expect(at((m) => m.type === 'start' && m.index === 1)).toBeLessThan(at((m) => m.type === 'finished' && m.index === 0));
  });

  it('a stop ends the policy on screen at the minute shown, and starts no policy after it', async () => {
    // three simulated days: the stop comes long before the end
    const long = TINY.replace('duration: 20m', 'duration: 3d');
    let asked = false;
    let secondStarted = false;
    const messages = await simulate(long, 2, (m, flag) => {
      if (m.type === 'start' && m.index === 1) secondStarted = true;
      // once both run: policy 0 on screen, policy 1 beside it
      if (!asked && secondStarted && m.type === 'minutes' && m.index === 0) {
        asked = true;
        // as session.tsx: the first minute, which it has passed, of policy 0 on screen
        expect(flag.ask(1, 0)).toBe(true);
      }
    });
    const results = finished(messages);
    expect(results.get(0)!.partial).toEqual({ stoppedAtSeconds: 60 });
    // the policy beside it stopped where it was, not compared; the third never started
    expect(results.get(1)?.partial?.stoppedAtSeconds ?? 0).toBeGreaterThan(0);
    expect(messages.some((m) => m.type === 'start' && m.index === 2)).toBe(false);
    expect(results.has(2)).toBe(false);
    expect(messages[messages.length - 1].type).toBe('done');
  });
});
