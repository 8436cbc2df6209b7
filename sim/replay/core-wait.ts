// How long a process waited for a core: the time its main thread was runnable but not running, and
// how many times it was put on a core (/proc/PID/schedstat: run ns, run-queue wait ns, timeslices;
// for a PID it is the thread group leader, the thread that runs a Node process's event loop, Redis's
// commands, a Postgres backend's statements). On one machine a replay's services wake each other
// for every request and event (driver, server, Redis, worker, Postgres), and every wake-up waits
// for a core: 40-90 us each with the machine 10-13% busy (2026-12-05, two shared cores of a VM),
// about a third of the processes' CPU time, where an M/M/c station at that load waits about 1%.
// compare's notes quote it beside the stages that cross processes.
import { readFileSync } from 'node:fs';

export interface CoreWait {
  /** Seconds on a core. */
  runSeconds: number;
  /** Seconds runnable, waiting for a core. */
  waitSeconds: number;
  /** Times it was put on a core (each wake-up is one, and so is each preemption). */
  slices: number;
}

export const NO_WAIT: CoreWait = { runSeconds: 0, waitSeconds: 0, slices: 0 };

/** A process's main thread as the scheduler counts it so far; null when it is gone or the kernel keeps no schedstat. */
export function mainThreadWait(pid: number): CoreWait | null {
  try {
    const [run, wait, slices] = readFileSync(`/proc/${pid}/schedstat`, 'latin1').trim().split(' ').map(Number);
    if (![run, wait, slices].every(Number.isFinite)) return null;
    return { runSeconds: run / 1e9, waitSeconds: wait / 1e9, slices };
  } catch {
    return null;
  }
}

/** What was counted between `before` (absent: the process started meanwhile) and `now`; a count that went back is another process under a reused pid, counted from its start. */
export function waitSince(before: CoreWait | undefined, now: CoreWait): CoreWait {
  if (!before || now.runSeconds < before.runSeconds || now.waitSeconds < before.waitSeconds || now.slices < before.slices) return now;
  return { runSeconds: now.runSeconds - before.runSeconds, waitSeconds: now.waitSeconds - before.waitSeconds, slices: now.slices - before.slices };
}

/** The waits of the pids a meter reads, by pid, keeping the last seen of each: a process gone by a reading keeps what it had counted up to its last one. */
export class CoreWaitBook {
  private readonly last = new Map<number, CoreWait>();

  /** Each pid's waits now (a pid that is gone, or has no schedstat, is left out). */
  read(pids: Iterable<number>): Map<number, CoreWait> {
    const out = new Map<number, CoreWait>();
    for (const pid of pids) {
      const w = mainThreadWait(pid);
      if (!w) continue;
      out.set(pid, w);
      this.last.set(pid, w);
    }
    return out;
  }

  /** A pid's part between readings `a` and `b`: from `a` (absent there: from its start) to `b`, or, gone by `b`, to its last reading; null when never read. */
  over(pid: number, a: ReadonlyMap<number, CoreWait>, b: ReadonlyMap<number, CoreWait>): CoreWait | null {
    const end = b.get(pid) ?? this.last.get(pid);
    return end ? waitSince(a.get(pid), end) : null;
  }
}

export function addWaits(a: CoreWait, b: CoreWait): CoreWait {
  return { runSeconds: a.runSeconds + b.runSeconds, waitSeconds: a.waitSeconds + b.waitSeconds, slices: a.slices + b.slices };
}

/** Mean wait for a core each time it was put on one, seconds (NaN with none). */
export function waitPerSlice(w: CoreWait): number {
  return w.slices > 0 ? w.waitSeconds / w.slices : NaN;
}

/** Wait for a core over time on one (NaN with none): what its CPU work was stretched by. */
export function waitPerRun(w: CoreWait): number {
  return w.runSeconds > 0 ? w.waitSeconds / w.runSeconds : NaN;
}
