// One dashboard session for run, sweep or replay: the simulation (sim-worker.ts) or the replay
// (replay-worker.ts) in a worker thread, the Ink view on this thread (see view.tsx), q / Ctrl-C /
// SIGINT turned into a clean stop. The
// command awaits the outcome, writes its files, and hands the final report back to be shown as the
// last frame, once the final live frame has been drawn.
import { Worker } from 'node:worker_threads';
import type { FanoutPolicy } from '../../core/fanout-policy.js';
import { InfrastructureError, InputError } from '../../sim/errors.js';
import type { RunResult } from '../../sim/result.js';
import type { Scenario } from '../../sim/scenario/types.js';
import type { WorkerInput } from './sim-worker.js';
import { DashboardStore, initialState, type LiveMessage } from './state.js';
import { StopFlag } from './stop-flag.js';
import { LiveView } from './view.js';

export interface LiveOutcome {
  /** Every result the worker finished, in the policies' order; a stopped run's with `partial`. */
  runs: RunResult[];
  /** Each policy's result by its index (none for a policy that did not run). */
  byPolicy: (RunResult | undefined)[];
  /** The policy on screen when the stop came (null: no stop, or none on screen). */
  stoppedIndex: number | null;
  /** The user stopped the run (q, Ctrl-C or SIGINT). */
  stopped: boolean;
  /** Stopped a second time: quit without waiting for the simulated minute (no result for it). */
  forced: boolean;
}

export class LiveSession {
  readonly store: DashboardStore;
  private readonly worker: Worker;
  private readonly stopFlag = new StopFlag();
  private readonly view: LiveView;
  private readonly byPolicy: (RunResult | undefined)[] = [];
  private readonly outcomePromise: Promise<LiveOutcome>;
  private settle!: { resolve: (o: LiveOutcome) => void; reject: (e: Error) => void };
  private settled = false;
  private readonly onSigint = () => this.stop(this.store.getState().stopRequested);

  /**
   * `replay`: the thread is replay-worker.ts with this input (the clock counts the replay's wall
   * time); otherwise sim-worker.ts simulates the policies, up to `threads` at once (default 1), and
   * makes a generated graph drawn in blocks on up to `graphThreads` (default `threads`).
   */
  constructor(opts: {
    scenario: Scenario;
    policies: FanoutPolicy[];
    labels: string[];
    mode: 'run' | 'sweep';
    threads?: number;
    graphThreads?: number;
    replay?: { input: object; timeScale: number };
  }) {
    const live = opts.replay ? { source: 'replay' as const, timeScale: opts.replay.timeScale } : undefined;
    this.store = new DashboardStore(initialState(opts.scenario, opts.labels, opts.mode, live));
    this.outcomePromise = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
    const stop = this.stopFlag.buffer;
    const workerData: WorkerInput | { input: object; stop: SharedArrayBuffer } = opts.replay
      ? { input: opts.replay.input, stop }
      : { scenario: opts.scenario, policies: opts.policies, stop, threads: opts.threads ?? 1, graphThreads: opts.graphThreads ?? opts.threads ?? 1 };
    // the compiled worker beside this file (dist/cli/dashboard/sim-worker.js or replay-worker.js)
    this.worker = new Worker(new URL(opts.replay ? './replay-worker.js' : './sim-worker.js', import.meta.url), { workerData });
    this.worker.on('message', (m: LiveMessage) => this.receive(m));
    this.worker.on('error', (err) => this.fail(err));
    this.worker.on('exit', (code) => {
      if (!this.settled) this.fail(new Error(`the simulation thread exited with code ${code}`));
    });
    process.on('SIGINT', this.onSigint);
    process.on('SIGTERM', this.onSigint);
    this.view = new LiveView(this.store, { onStop: (force) => this.stop(force) });
  }

  /** Resolves once the worker has finished every policy or stopped. */
  outcome(): Promise<LiveOutcome> {
    return this.outcomePromise;
  }

  /**
   * Ask the run to stop at the simulated minute on screen; `force` (a second stop) quits at once.
   * The flag carries that minute, the first at least (0: no stop), and the policy on screen: the
   * simulation is usually ahead of the screen, and live-policy.ts runs that policy again to the
   * minute shown.
   */
  stop(force = false): void {
    if (this.settled) return;
    const state = this.store.getState();
    // the current run's minute in the last frame drawn (its row's, when it was not yet charted); none drawn yet: its first minute
    const shown = state.current !== null ? (this.view.shownAt.get(state.current.index) ?? 0) : 0;
    const minute = Math.max(1, Math.floor(shown / 60));
    this.store.dispatch({ type: 'stop', atSeconds: state.source === 'replay' ? null : minute * 60 });
    this.stopFlag.ask(minute, state.current?.index ?? null);
    // nothing to wait for before the first simulated minute (the graph is still being built), or when
    // forced; a replay always finishes its cleanup (it stops its stack and removes its scratch space)
    if (force || (state.current === null && state.source !== 'replay')) {
      this.settled = true;
      void this.worker.terminate();
      this.settle.resolve(force ? { runs: [], byPolicy: [], stoppedIndex: this.stoppedIndex(), stopped: true, forced: true } : this.outcomeNow(true));
    }
  }

  /**
   * Show the final report as the last frame, then leave the terminal as the report left it. The
   * dashboard's final state (the whole simulated clock, or the minute a stop ended on) is drawn first.
   */
  async finish(report: string): Promise<void> {
    await this.view.showReport(report);
    await this.close();
  }

  /** Take the dashboard off the screen without a report (errors, a stop before anything ran). */
  async close(): Promise<void> {
    process.off('SIGINT', this.onSigint);
    process.off('SIGTERM', this.onSigint);
    await this.view.close();
    if (!this.settled) {
      this.settled = true;
      await this.worker.terminate();
    }
  }

  private receive(m: LiveMessage): void {
    if (this.settled) return;
    if (m.type === 'finished') this.byPolicy[m.index] = m.result;
    if (m.type === 'error') {
      const err = m.input ? new InputError(m.message) : m.infrastructure ? new InfrastructureError(m.message) : Object.assign(new Error(m.message), { stack: m.stack });
      this.fail(err);
      return;
    }
    this.store.dispatch(m);
    if (m.type === 'done') {
      this.settled = true;
      // a stop that came in the run's last simulated minute changes nothing: the run is whole
      this.settle.resolve(this.outcomeNow());
    }
  }

  /** The outcome so far; `stopped` when asked to stop, or when a policy is missing or partial. */
  private outcomeNow(stopAsked = false): LiveOutcome {
    const runs = this.byPolicy.filter((r) => r !== undefined);
    const stopped = stopAsked || runs.length < this.store.getState().policies.length || runs.some((r) => r.partial);
    return { runs, byPolicy: [...this.byPolicy], stoppedIndex: stopped ? this.stoppedIndex() : null, stopped, forced: false };
  }

  /** The policy on screen when the stop came (null: no stop, or none on screen). */
  private stoppedIndex(): number | null {
    const i = this.stopFlag.onScreen();
    return i >= 0 ? i : null;
  }

  private fail(err: Error): void {
    if (this.settled) return;
    this.settled = true;
    void this.worker.terminate();
    // the error line goes to stderr below a cleared dashboard
    this.close().then(
      () => this.settle.reject(err),
      () => this.settle.reject(err),
    );
  }
}
