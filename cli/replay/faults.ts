// The scenario's faults, injected into the self-contained stack at their instants (simulated time
// over the time scale): workerCrash and apiCrash kill processes with SIGKILL, whatever they hold,
// and start them again after `down`; eventLogLoss and redisFlush delete the event log's keys (a
// flush's cache keys go as its cacheLoss, at the same instant); redisOutage and postgresOutage
// break the stack's path to the service at its proxy (fault-proxy.ts) for their window. Each
// fault's figures are measured around it: the event log's backlog before and at the restart (the
// outage's end) and when it was back, the posts and reads due meanwhile and how they were answered
// (fault-figures.ts). The reconciliation at the end proves what was acknowledged meanwhile lost or not.
import { eventStreamKey } from '../../core/keys.js';
import { groupPresent, loseEventLog } from '../../sim/replay/cache-loss.js';
import type { DriverResult } from '../../sim/replay/driver.js';
import { eventBacklog } from '../../sim/replay/redis-figures.js';
import type { CrashFigures, KeyLossFigures, OutageFigures } from '../../sim/replay/result.js';
import type { Reconciliation } from '../../sim/replay/reconcile.js';
import { firstAckAfter, faultLag, postsDuring, readsDuring, reconciledDuring, type FaultSpan } from './fault-figures.js';
import { addCounters, counterDelta, type ServerCounters } from '../../sim/replay/server-metrics.js';
import type { MeasureContext } from './measure.js';
import { REPLAY } from './settings.js';
import { sleep } from '../../server/events/backoff.js';

type Counted = 'posts' | 'reads' | 'firstAckAfterSeconds' | 'lag';
type Measured = Omit<CrashFigures, Counted>;
type MeasuredOutage = Omit<OutageFigures, Counted>;

export interface FaultFigures {
  crashes: CrashFigures[];
  keyLosses: KeyLossFigures[];
  outages: OutageFigures[];
}

export class FaultInjector {
  /** Each fault's timer, and how to settle it as not run (a stop before its instant). */
  private readonly timers: { timer: NodeJS.Timeout; fired: boolean; drop: () => void }[] = [];
  private readonly crashes: Promise<Measured | null>[] = [];
  private readonly keyLosses: Promise<KeyLossFigures | null>[] = [];
  private readonly outages: Promise<MeasuredOutage | null>[] = [];
  /** The server's counters: the deltas of the processes killed, and where the running one's count starts. */
  private serverDone: ServerCounters | null = null;
  private serverFrom: ServerCounters;
  private counted: {
    crashes: (Measured & Omit<CrashFigures, keyof Measured | 'lag'> & { lagSpan: readonly [number, number] })[];
    keyLosses: KeyLossFigures[];
    outages: (MeasuredOutage & Omit<OutageFigures, keyof MeasuredOutage | 'lag'> & { lagSpan: readonly [number, number] })[];
  } | null = null;

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
    if ((s.workerCrashes.length > 0 || s.apiCrashes.length > 0 || s.keyLosses.length > 0 || s.outages.length > 0) && ctx.faults === null) {
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
    for (const o of s.outages) this.outage(o.at, o.window, o.service, o.mode);
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
          ctx.cpu.remember();
          await f.crashServer();
        } else {
          atSeconds = this.since();
          ctx.cpu.remember();
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

  private outage(at: number, window: number, service: 'redis' | 'postgres', mode: OutageFigures['mode']): void {
    const { ctx } = this;
    const kind = service === 'redis' ? 'redisOutage' : 'postgresOutage';
    let resolve!: (f: MeasuredOutage | null) => void;
    this.outages.push(new Promise((r) => (resolve = r)));
    this.at(at, async () => {
      const f = ctx.faults!;
      let healed = false;
      try {
        if (ctx.signal.aborted) return resolve(null);
        const backlogBefore = await this.backlog();
        const atSeconds = this.since();
        const { connections } = f.outage(service, mode);
        ctx.log(`${kind}: ${service} out of the stack's reach (${mode === 'reset' ? 'connections reset' : 'connections hang'}, ${connections} open) at ${atSeconds.toFixed(1)} s for ${(window / this.tau).toFixed(1)} s`);
        // a stop gives the service back at once: the stack must finish its work on it
        await sleep((window / this.tau) * 1000, ctx.signal).catch(() => undefined);
        const backlogAtEnd = await this.backlog();
        const endedAtSeconds = this.since();
        const arrived = f.heal(service);
        healed = true;
        if (ctx.signal.aborted) return resolve(null);
        const recoveredAfterSeconds = (await this.until(async () => (await this.backlog()) <= backlogBefore)) - endedAtSeconds;
        ctx.log(`${kind}: ${service} back at ${endedAtSeconds.toFixed(1)} s; the backlog (${backlogAtEnd} events then) back to ${backlogBefore} after ${recoveredAfterSeconds.toFixed(1)} s`);
        resolve({ kind, mode, atSeconds, endedAtSeconds, connections: { open: connections, ...arrived }, backlogBefore, backlogAtEnd, recoveredAfterSeconds });
      } catch (err) {
        if (!healed) {
          try {
            f.heal(service);
          } catch {
            // the stack is gone: nothing to give back
          }
        }
        ctx.log(`${kind} failed: ${(err as Error).message}`);
        resolve(null);
      }
    }, () => resolve(null));
  }

  /**
   * Waits for every fault's restart and recovery (a restart due after the window still happens: the
   * settling needs the processes back), then counts what each cost: the posts and reads due from the
   * fault until the process was ready (the service back), by answer. figures() adds the lag.
   */
  async done(driver: DriverResult): Promise<void> {
    // a fault due after the window (its schedule ends first) or after a stop does not happen
    this.cancel();
    const crashes = (await Promise.all(this.crashes)).filter((f) => f !== null);
    const keyLosses = (await Promise.all(this.keyLosses)).filter((f) => f !== null);
    const outages = (await Promise.all(this.outages)).filter((f) => f !== null);
    const cost = (fromSeconds: number, toSeconds: number, recoveredAfterSeconds: number) => {
      const span = this.span(driver, fromSeconds, toSeconds);
      // a backlog never seen back: the lag up to the end of the probes' series
      const lagTo = toSeconds + (Number.isFinite(recoveredAfterSeconds) ? recoveredAfterSeconds : Infinity);
      return { posts: postsDuring(driver, span), reads: readsDuring(driver, span), firstAckAfterSeconds: firstAckAfter(driver, span.toMs), lagSpan: [fromSeconds, lagTo] as const };
    };
    this.counted = {
      crashes: crashes.map((f) => {
        // the first 201 is counted from the restart, ready or not
        return { ...f, ...cost(f.atSeconds, readyAt(f), f.recoveredAfterSeconds - f.readyAfterSeconds), firstAckAfterSeconds: firstAckAfter(driver, this.driverMs(driver, f.restartedAtSeconds)) };
      }),
      keyLosses,
      outages: outages.map((f) => ({ ...f, ...cost(f.atSeconds, f.endedAtSeconds, f.recoveredAfterSeconds) })),
    };
  }

  /**
   * Every fault's figures, in time order, once done(): the fan-out lag each cost from the probes'
   * per-interval p99 (`lagP99ByBucket`, by creation, `intervalSeconds` wide; empty: none probed).
   */
  figures(lagP99ByBucket: readonly number[], intervalSeconds: number): FaultFigures {
    const c = this.counted ?? { crashes: [], keyLosses: [], outages: [] };
    const firstFault = Math.min(...[...c.crashes, ...c.keyLosses, ...c.outages].map((f) => f.atSeconds));
    const withLag = <T extends { lagSpan: readonly [number, number]; atSeconds: number }>({ lagSpan, ...f }: T) => ({
      ...f,
      lag: faultLag(lagP99ByBucket, intervalSeconds, lagSpan[0], lagSpan[1], firstFault),
    });
    const byTime = (a: { atSeconds: number }, b: { atSeconds: number }) => a.atSeconds - b.atSeconds;
    return {
      crashes: c.crashes.map(withLag).sort(byTime),
      keyLosses: [...c.keyLosses].sort(byTime),
      outages: c.outages.map(withLag).sort(byTime),
    };
  }

  /** A fault's span in driver time: from its instant to the process ready again (the service back). */
  private span(driver: DriverResult, fromSeconds: number, toSeconds: number): FaultSpan {
    return { fromMs: this.driverMs(driver, fromSeconds), toMs: this.driverMs(driver, toSeconds) };
  }

  /** Seconds of the window as ms of the driver's clock. */
  private driverMs(driver: DriverResult, seconds: number): number {
    return seconds * 1000 + this.startedAt - driver.t0EpochMs;
  }

  /** Each crash's and outage's share of what the reconciliation found, over the span its posts are counted on. */
  attribute(figures: FaultFigures, driver: DriverResult, rec: Reconciliation): void {
    for (const f of figures.crashes) f.reconciled = reconciledDuring(driver, rec, this.span(driver, f.atSeconds, readyAt(f)));
    for (const f of figures.outages) f.reconciled = reconciledDuring(driver, rec, this.span(driver, f.atSeconds, f.endedAtSeconds));
  }

  /** The server's counters over the window, across its restarts. */
  serverDelta(after: ServerCounters): ServerCounters {
    return addIfAny(this.serverDone, counterDelta(this.serverFrom, after));
  }
}

function addIfAny(a: ServerCounters | null, b: ServerCounters): ServerCounters {
  return a ? addCounters(a, b) : b;
}

/** When a crashed process was ready again: the end of the span its cost is counted over. */
function readyAt(f: Pick<CrashFigures, 'restartedAtSeconds' | 'readyAfterSeconds'>): number {
  return f.restartedAtSeconds + f.readyAfterSeconds;
}
