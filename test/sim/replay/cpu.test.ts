// The replay's CPU meter across a restart: a process killed mid-window keeps the CPU it used up to
// the kill under its name, added to its successor's, so a fault drill's killed processes do not
// land in "other".
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { CpuMeter } from '../../../sim/replay/cpu.js';

const children: ChildProcess[] = [];

/** A child that spins on one core until killed. */
function spinner(): ChildProcess {
  const c = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
  children.push(c);
  return c;
}

afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the CPU meter', () => {
  it("counts a killed process's CPU up to its kill under its name, beside its successor's", async () => {
    const meter = new CpuMeter(null, null, 5432, null);
    const first = spinner();
    meter.setProcesses(new Map([['worker 1', first.pid!]]));
    const a = await meter.snapshot();
    await sleep(600);
    meter.remember();
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    const second = spinner();
    meter.setProcesses(new Map([['worker 1', second.pid!]]));
    await sleep(600);
    const share = meter.share(a, await meter.snapshot());
    // two spinners of ~0.6 s each over ~1.2 s of wall: ~100% of a core (less their start-up and
    // whatever the other core's load took from them); without the first one's part, ~50%
    expect(share.processes['worker 1']).toBeGreaterThan(70);
    expect(share.processes['worker 1']).toBeLessThanOrEqual(105);
  });
});
