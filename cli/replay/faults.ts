// The scenario's faults, injected into the self-contained stack at their instants (simulated time
// over the time scale): workerCrash and apiCrash kill processes with SIGKILL, whatever they hold,
// and start them again after `down`; eventLogLoss and redisFlush delete the event log's keys (a
// flush's cache keys go as its cacheLoss, at the same instant). Each fault's figures are measured
// around it: the event log's backlog before and at the restart and when it was back, the posts sent
// while the process was down and how they were answered. The reconciliation at the end proves
// what was acknowledged meanwhile lost or not.
import { eventStreamKey } from '../../core/keys.js';
import { groupPresent, loseEventLog } from '../../sim/replay/cache-loss.js';
import type { DriverResult, PostOutcome } from '../../sim/replay/driver.js';
import { eventBacklog } from '../../sim/replay/redis-figures.js';
import type { CrashFigures, KeyLossFigures } from '../../sim/replay/result.js';
import { addCounters, counterDelta, type ServerCounters } from '../../sim/replay/server-metrics.js';
import type { MeasureContext } from './measure.js';
import { REPLAY } from './settings.js';
import { sleep } from '../../server/events/backoff.js';

type Measured = Omit<CrashFigures, 'posts' | 'firstAckAfterSeconds'>;

export class FaultInjector {
  /** Each fault's timer, and how to settle it as not run (a stop before its instant). */
  private readonly timers: { timer: NodeJS.Timeout; fired: boolean; drop: () => void }[] = [];
  private readonly crashes: Promise<Measured | null>[] = [];
  private readonly keyLosses: Promise<KeyLossFigures | null>[] = [];
  /** The server's counters: the deltas of the processes killed, and where the running one's count starts. */
  private serverDone: ServerCounters | null = null;
  private serverFrom: ServerCounters;

  constructor(
    private readonly ctx: MeasureContext,
    private readonly tau: number,
    private readonly startedAt: number,
    /** The running server's counters (/metrics, reconnecting after a restart). */
    private readonly scrape: () => Promise<ServerCounters>,
    serverBefore: ServerCounters,
  ) {
    this.serverFrom = serverBefore;
    const s = ctx.world.schedule;
    if ((s.workerCrashes.length > 0 || s.apiCrashes.length > 0 || s.keyLosses.length > 0) && ctx.faults === null) {
      throw new Error("replay: fault events need the self-contained stack (a target's processes and event log are not ours to break)");
    }
  }

  private since(): number {
    return (Date.now() - this.startedAt) / 1000;
  }

  private backlog(): Promise<number> {
    return eventBacklog(this.ctx.redis, this.ctx.streamPrefix, this.ctx.partitions, this.ctx.group).catch(() => NaN);
  }

  /** When (since()) `check` first held, polled every settlePollMs for up to settleMaxMs; NaN if never (or stopped). */
  private async until(check: () => Promise<boolean>): Promise<number> {
    for (const end = Date.now() + REPLAY.settleMaxMs; Date.now() < end && !this.ctx.signal.aborted; ) {
      if (await check()) return this.since();
      await new Promise((r) => setTimeout(r, REPLAY.settlePollMs));
    }
    return NaN;
  }

  private at(simulated: number, run: () => Promise<void>, drop: () => void): void {
    const entry = { timer: setTimeout(() => ((entry.fired = true), void run()), (simulated / this.tau) * 1000), fired: false, drop };
    this.timers.push(entry);
  }

  /** Sets every fault's timer. */
  start(): void {
    const s = this.ctx.world.schedule;
    for (const c of s.workerCrashes) this.crash(c.at, c.down, 'workerCrash', c.workers);
    for (const c of s.apiCrashes) this.crash(c.at, c.down, 'apiCrash', null);
    for (const loss of s.keyLosses) this.loseLog(loss.at, loss.kind);
  }

  /** Drops the faults not yet due (a stop, or the window over): they settle as not run. */
  cancel(): void {
    for (const t of this.timers) {
      if (t.fired) continue;
      clearTimeout(t.timer);
      t.fired = true;
      t.drop();
    }
  }

  private crash(at: number, down: number, kind: CrashFigures['kind'], workers: number | null): void {
    const { ctx } = this;
    const f = ctx.faults!;
    let resolve!: (m: Measured | null) => void;
    this.crashes.push(new Promise((r) => (resolve = r)));
    this.at(at, async () => {
      try {
        if (ctx.signal.aborted) return resolve(null);
        const backlogBefore = await this.backlog();
        let killed: number[] = [];
        let atSeconds: number;
        if (kind === 'apiCrash') {
          // its counters up to the kill (what the last instants added is lost with it)
          const last = await this.scrape().catch((err: Error) => {
            ctx.log(`apiCrash: the server's counters could not be read before the kill (${err.message}); theirs since the window's start are lost`);
            return null;
          });
          if (last) this.serverDone = addIfAny(this.serverDone, counterDelta(this.serverFrom, last));
          atSeconds = this.since();
          await f.crashServer();
        } else {
          atSeconds = this.since();
          killed = await f.crashWorkers(workers);
        }
        const who = kind === 'apiCrash' ? 'the API' : `worker${killed.length === 1 ? '' : 's'} ${killed.join(', ')}`;
        ctx.log(`${kind}: ${who} killed (SIGKILL) at ${atSeconds.toFixed(1)} s, down for ${(down / this.tau).toFixed(1)} s`);
        await sleep((down / this.tau) * 1000, ctx.signal);
        // stopped meanwhile: the stack is being stopped, nothing is started again
        if (ctx.signal.aborted) {
          ctx.log(`${kind}: the replay stopped before the restart`);
          return resolve(null);
        }
        const backlogAtRestart = await this.backlog();
        const restartedAtSeconds = this.since();
        if (kind === 'apiCrash') {
          await f.restartServer();
          this.serverFrom = await this.scrape();
        } else await f.restartWorkers(killed);
        ctx.cpu.setProcesses(f.pids());
        const readyAfterSeconds = this.since() - restartedAtSeconds;
        const recoveredAfterSeconds = (await this.until(async () => (await this.backlog()) <= backlogBefore)) - restartedAtSeconds;
        ctx.log(`${kind}: back after ${readyAfterSeconds.toFixed(1)} s; the backlog (${backlogAtRestart} events at the restart) back to ${backlogBefore} after ${recoveredAfterSeconds.toFixed(1)} s`);
        resolve({ kind, atSeconds, workers: killed, restartedAtSeconds, readyAfterSeconds, backlogBefore, backlogAtRestart, recoveredAfterSeconds });
      } catch (err) {
        ctx.log(`${kind} failed: ${(err as Error).message}`);
        resolve(null);
      }
    }, () => resolve(null));
  }

  private loseLog(at: number, kind: KeyLossFigures['kind']): void {
    const { ctx } = this;
    const streamKeys = Array.from({ length: ctx.partitions }, (_, p) => eventStreamKey(ctx.streamPrefix, p));
    let resolve!: (f: KeyLossFigures | null) => void;
    this.keyLosses.push(new Promise((r) => (resolve = r)));
    this.at(at, async () => {
      try {
        const atSeconds = this.since();
        const f = await loseEventLog(ctx.redis, ctx.streamPrefix);
        ctx.log(`${kind}: the event log's ${f.keys} keys deleted at ${atSeconds.toFixed(1)} s`);
        const groupBackAfterSeconds = (await this.until(() => groupPresent(ctx.redis, streamKeys, ctx.group))) - atSeconds;
        resolve({ kind, atSeconds, keys: f.keys, groupBackAfterSeconds });
      } catch (err) {
        ctx.log(`${kind} failed: ${(err as Error).message}`);
        resolve(null);
      }
    }, () => resolve(null));
  }

  /**
   * Waits for every fault's restart and recovery (a restart due after the window still happens: the
   * settling needs the processes back); each crash's posts from the kill until ready, by answer.
   */
  async done(driver: DriverResult): Promise<{ crashes: CrashFigures[]; keyLosses: KeyLossFigures[] }> {
    // a fault due after the window (its schedule ends first) or after a stop does not happen
    this.cancel();
    const crashes = (await Promise.all(this.crashes)).filter((f) => f !== null);
    const keyLosses = (await Promise.all(this.keyLosses)).filter((f) => f !== null);
    const ms = (seconds: number) => seconds * 1000 + this.startedAt - driver.t0EpochMs;
    return {
      crashes: crashes
        .map((f) => {
          // the posts in flight at the kill and those due while it was down (the driver may have
          // held them for a connection)
          const from = ms(f.atSeconds);
          const to = ms(f.restartedAtSeconds + f.readyAfterSeconds);
          const inFlight = (p: PostOutcome) => p.sentMs !== null && p.sentMs <= from && (p.answeredMs === null || p.answeredMs >= from);
          const due = driver.posts.filter((p) => (p.intendedMs >= from && p.intendedMs <= to) || inFlight(p));
          const acknowledged = due.filter((p) => p.status === 201 && p.answeredMs !== null);
          const first = driver.posts.find((p) => p.status === 201 && p.answeredMs !== null && p.answeredMs > ms(f.restartedAtSeconds));
          return {
            ...f,
            posts: {
              due: due.length,
              acknowledged: acknowledged.length,
              failed: due.length - acknowledged.length,
              maxWaitSeconds: acknowledged.reduce((m, p) => Math.max(m, (p.answeredMs! - p.intendedMs) / 1000), 0),
            },
            firstAckAfterSeconds: first ? (first.answeredMs! - ms(f.restartedAtSeconds)) / 1000 : NaN,
          };
        })
        .sort((a, b) => a.atSeconds - b.atSeconds),
      keyLosses: keyLosses.sort((a, b) => a.atSeconds - b.atSeconds),
    };
  }

  /** The server's counters over the window, across its restarts. */
  serverDelta(after: ServerCounters): ServerCounters {
    return addIfAny(this.serverDone, counterDelta(this.serverFrom, after));
  }
}

function addIfAny(a: ServerCounters | null, b: ServerCounters): ServerCounters {
  return a ? addCounters(a, b) : b;
}
