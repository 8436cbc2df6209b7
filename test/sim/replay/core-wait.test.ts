// A process's waits for a core (sim/replay/core-wait.ts): read from the kernel's schedstat, the
// interval's part of it, and a machine with more spinners than cores making each of them wait.
import { spawn, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { addWaits, CoreWaitBook, mainThreadWait, waitPerRun, waitPerSlice, waitSince } from '../../../sim/replay/core-wait.js';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("a process's waits for a core", () => {
  it("reads this process's main thread, and nothing of a process that is not there", () => {
    const w = mainThreadWait(process.pid)!;
    expect(w.runSeconds).toBeGreaterThan(0);
    expect(w.slices).toBeGreaterThan(0);
    expect(w.waitSeconds).toBeGreaterThanOrEqual(0);
    // pid_max is at most 2^22: this one cannot exist
    expect(mainThreadWait(2 ** 23)).toBeNull();
  });

  it("takes an interval's part, from zero for a process started in it, never below zero", () => {
    const before = { runSeconds: 1, waitSeconds: 0.25, slices: 100 };
    const now = { runSeconds: 1.5, waitSeconds: 0.45, slices: 140 };
    expect(waitSince(before, now)).toEqual({ runSeconds: 0.5, waitSeconds: 0.2, slices: 40 });
    expect(waitSince(undefined, now)).toEqual(now);
    // a pid reused by another process reads less than before: that process counts from its start
    expect(waitSince(now, before)).toEqual(before);
    expect(waitSince(now, { ...now, slices: 139 })).toEqual({ ...now, slices: 139 });
    const sum = addWaits(waitSince(before, now), now);
    expect(sum).toEqual({ runSeconds: 2, waitSeconds: 0.65, slices: 180 });
    expect(waitPerSlice(waitSince(before, now))).toBeCloseTo(0.005, 12);
    expect(waitPerRun(waitSince(before, now))).toBeCloseTo(0.4, 12);
    expect(waitPerSlice({ runSeconds: 0, waitSeconds: 0, slices: 0 })).toBeNaN();
    expect(waitPerRun({ runSeconds: 0, waitSeconds: 0, slices: 0 })).toBeNaN();
  });

  it('keeps what a process gone by a reading had counted up to its last one', async () => {
    const child = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
    children.push(child);
    const book = new CoreWaitBook();
    const pid = child.pid!;
    const a = book.read([pid]);
    await sleep(300);
    const last = book.read([pid]).get(pid)!;
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    await sleep(50); // reaped: its /proc entry gone
    const b = book.read([pid]);
    expect(b.has(pid)).toBe(false);
    expect(book.over(pid, a, b)).toEqual(waitSince(a.get(pid), last));
    expect(book.over(pid, a, b)!.runSeconds).toBeGreaterThan(0.1);
    // a pid never read has nothing
    expect(book.over(2 ** 23, a, b)).toBeNull();
  });

  it('counts the wait of a spinner sharing the cores with more spinners than there are cores', async () => {
    // cores + 1 spinners: each gets cores / (cores + 1) of a core, and waits the rest, 1 / cores of
    // its run time (0.5 on two cores); other load on the machine (CI's other test files) only adds to it
    const cores = availableParallelism();
    for (let i = 0; i <= cores; i++) children.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
    await sleep(300);
    const a = children.map((c) => mainThreadWait(c.pid!)!);
    await sleep(1_000);
    const per = children.map((c, i) => waitPerRun(waitSince(a[i], mainThreadWait(c.pid!)!)));
    const mean = per.reduce((s, x) => s + x, 0) / per.length;
    expect(mean).toBeGreaterThan(0.5 / cores);
  });
});
