// What the dashboard shows, as plain data: the messages a running simulation sends (see
// sim-worker.ts), folded into one state object by `reduce`, held by a small store the Ink
// components subscribe to. Pure, so tests can feed it the snapshots of a real run without a worker.
import type { FiredEvent } from '../../sim/model/metrics.js';
import { SERIES_INTERVAL, type MinuteSnapshot } from '../../sim/model/simulation.js';
import type { RunResult } from '../../sim/result.js';
import type { Scenario, Slo } from '../../sim/scenario/types.js';
import { sweepRow, type SweepRow } from '../../sim/sweep.js';

/** What the simulation thread tells the dashboard. */
export type LiveMessage =
  | { type: 'prepare'; fraction: number; detail: string }
  | { type: 'start'; index: number; policy: string; durationSeconds: number; intervalSeconds?: number }
  | { type: 'minutes'; index: number; snapshots: MinuteSnapshot[] }
  | { type: 'finished'; index: number; result: RunResult }
  | { type: 'done' }
  | { type: 'error'; input: boolean; infrastructure?: boolean; message: string; stack?: string };

/** What the command adds: the user asked to stop; take the live view down; the final report, shown as the last frame. */
export type LocalMessage = { type: 'stop'; atSeconds: number | null } | { type: 'clear' } | { type: 'report'; text: string };

export interface PolicyState {
  label: string;
  status: 'waiting' | 'running' | 'finished' | 'stopped';
  /** The sweep row, once the policy has finished. */
  row: SweepRow | null;
  /** Where a stopped policy's run ended (simulated seconds). */
  stoppedAtSeconds: number | null;
}

/** A run being simulated: its per-minute series so far. */
export interface CurrentRun {
  index: number;
  policy: string;
  durationSeconds: number;
  /** Seconds per series column: a simulated minute, or (replay) the wall seconds a simulated minute takes. */
  intervalSeconds: number;
  startedWall: number;
  lastWall: number;
  atSeconds: number;
  postsPerSecond: number[];
  writesPerSecond: number[];
  backlogWrites: number[];
  lagP99Seconds: number[];
  readP99Ms: number[];
  memoryBytes: number[];
  soFar: MinuteSnapshot['soFar'] | null;
  events: FiredEvent[];
}

export interface DashboardState {
  mode: 'run' | 'sweep';
  /** What the clock counts: simulated time, or the live replay's wall time (at timeScale simulated seconds per wall second). */
  source: 'simulate' | 'replay';
  timeScale: number;
  scenario: { name: string; seed: number; durationSeconds: number; population: number | null; users: number | null };
  slo: Slo;
  writesPerSecondPerWorker: number;
  phase: 'prepare' | 'simulate' | 'done' | 'report';
  prepare: { fraction: number; detail: string };
  policies: PolicyState[];
  /** Every policy running now, by index: a parallel sweep's threads run several at once. */
  running: Record<number, CurrentRun>;
  /** The run on screen: the lowest-numbered one running, else the last to finish. */
  current: CurrentRun | null;
  /** Wall time the first policy started: the sweep's ETA counts from here. */
  firstStartWall: number | null;
  stopRequested: boolean;
  /** Where a stop ends the simulation (the minute on screen when it was asked): later minutes are not shown. Null: no stop, or a replay's. */
  stopAtSeconds: number | null;
  report: string | null;
  /** Wall time of the latest message: elapsed time and the ETA are shown as of then. */
  wallNow: number;
}

export function initialState(sc: Scenario, labels: string[], mode: 'run' | 'sweep', live: { source: 'simulate' | 'replay'; timeScale: number } = { source: 'simulate', timeScale: 1 }): DashboardState {
  return {
    mode,
    source: live.source,
    timeScale: live.timeScale,
    scenario: {
      name: sc.name,
      seed: sc.seed,
      durationSeconds: sc.duration,
      population: sc.population,
      users: sc.graph.kind === 'generate' ? sc.graph.users : null,
    },
    slo: sc.slo,
    writesPerSecondPerWorker: sc.infrastructure.writesPerSecondPerWorker,
    phase: 'prepare',
    prepare: { fraction: 0, detail: '' },
    policies: labels.map((label) => ({ label, status: 'waiting', row: null, stoppedAtSeconds: null })),
    running: {},
    current: null,
    firstStartWall: null,
    stopRequested: false,
    stopAtSeconds: null,
    report: null,
    wallNow: 0,
  };
}

export function reduce(s: DashboardState, msg: LiveMessage | LocalMessage, now: number): DashboardState {
  switch (msg.type) {
    case 'prepare':
      return { ...s, prepare: { fraction: msg.fraction, detail: msg.detail } };
    case 'start': {
      const current: CurrentRun = {
        index: msg.index,
        policy: msg.policy,
        durationSeconds: msg.durationSeconds,
        intervalSeconds: msg.intervalSeconds ?? SERIES_INTERVAL,
        startedWall: now,
        lastWall: now,
        atSeconds: 0,
        postsPerSecond: [],
        writesPerSecond: [],
        backlogWrites: [],
        lagP99Seconds: [],
        readP99Ms: [],
        memoryBytes: [],
        soFar: null,
        events: [],
      };
      const running = { ...s.running, [msg.index]: current };
      return { ...s, phase: 'simulate', running, current: onScreen(running, s.current), firstStartWall: s.firstStartWall ?? now, policies: withStatus(s.policies, msg.index, 'running') };
    }
    case 'minutes': {
      const c = s.running[msg.index];
      // the minutes a stopped run simulated past the one on screen are not part of its result
      const snapshots = s.stopAtSeconds === null ? msg.snapshots : msg.snapshots.filter((m) => m.atSeconds <= (s.stopAtSeconds as number));
      if (!c || snapshots.length === 0) return s;
      const next: CurrentRun = {
        ...c,
        lastWall: now,
        postsPerSecond: [...c.postsPerSecond],
        writesPerSecond: [...c.writesPerSecond],
        backlogWrites: [...c.backlogWrites],
        lagP99Seconds: [...c.lagP99Seconds],
        readP99Ms: [...c.readP99Ms],
        memoryBytes: [...c.memoryBytes],
      };
      for (const m of snapshots) {
        next.postsPerSecond[m.minute] = m.postsPerSecond;
        next.writesPerSecond[m.minute] = m.writesPerSecond;
        next.backlogWrites[m.minute] = m.backlogWrites;
        next.lagP99Seconds[m.minute] = m.lagP99Seconds;
        next.readP99Ms[m.minute] = m.readP99Ms;
        next.memoryBytes[m.minute] = m.memoryBytes;
      }
      const last = snapshots[snapshots.length - 1];
      next.atSeconds = last.atSeconds;
      next.soFar = last.soFar;
      next.events = last.events;
      const running = { ...s.running, [msg.index]: next };
      return { ...s, running, current: onScreen(running, s.current) };
    }
    case 'finished': {
      const stoppedAt = msg.result.partial?.stoppedAtSeconds ?? null;
      const policies = s.policies.map((p, i) =>
        i === msg.index ? { ...p, status: stoppedAt !== null ? ('stopped' as const) : ('finished' as const), row: sweepRow(msg.result, s.writesPerSecondPerWorker), stoppedAtSeconds: stoppedAt } : p,
      );
      const { [msg.index]: finished, ...running } = s.running;
      // with nothing left running, the run that finished last stays on screen
      return { ...s, policies, running, current: onScreen(running, finished ?? s.current) };
    }
    case 'done':
      return { ...s, phase: 'done' };
    case 'error':
      return s;
    case 'stop':
      return s.stopRequested ? s : { ...s, stopRequested: true, stopAtSeconds: msg.atSeconds };
    case 'clear':
      return { ...s, phase: 'report' };
    case 'report':
      return { ...s, phase: 'report', report: msg.text };
  }
}

/** The lowest-numbered run in `running`, else `otherwise`. */
function onScreen(running: Record<number, CurrentRun>, otherwise: CurrentRun | null): CurrentRun | null {
  let first: CurrentRun | null = null;
  for (const r of Object.values(running)) if (first === null || r.index < first.index) first = r;
  return first ?? otherwise;
}

/** The share of a sweep simulated so far: its finished and stopped policies whole, the running ones by their clocks. */
export function sweepFraction(s: DashboardState): number {
  const n = s.policies.length;
  if (n === 0) return 1;
  let done = 0;
  for (const p of s.policies) if (p.status === 'finished' || p.status === 'stopped') done++;
  for (const r of Object.values(s.running)) done += r.durationSeconds > 0 ? Math.min(1, r.atSeconds / r.durationSeconds) : 1;
  return done / n;
}

function withStatus(policies: PolicyState[], index: number, status: PolicyState['status']): PolicyState[] {
  return policies.map((p, i) => (i === index ? { ...p, status } : p));
}

/** A store the Ink components subscribe to (useSyncExternalStore): one immutable state per message. */
export class DashboardStore {
  private state: DashboardState;
  private readonly listeners = new Set<() => void>();

  constructor(initial: DashboardState, private readonly clock: () => number = Date.now) {
    this.state = initial;
  }

  dispatch = (msg: LiveMessage | LocalMessage): void => {
    const now = this.clock();
    this.state = { ...reduce(this.state, msg, now), wallNow: now };
    for (const l of this.listeners) l();
  };

  getState = (): DashboardState => this.state;

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };
}
