// The dashboard on the terminal: the Ink instance, and knowing which state it has drawn.
//
// Ink redraws at most every 33 ms: a store change inside that window only schedules a trailing
// redraw on a timer, and the redraw draws whatever the tree holds when the timer fires. At the end
// of a run the last minute's snapshot, `finished` and `done` usually arrive together, and the
// command then writes its report files synchronously and takes the dashboard down, all before
// the event loop runs that timer: the redraw that finally comes draws the cleared frame, and the
// last live frame (the 100% simulated clock) never reaches the screen. So every change of screen
// here first waits until Ink has drawn the store's current state (Ink's onRender hook, counted
// against the store's changes), then changes it.
import { render, type Instance } from 'ink';
import { Dashboard } from './Dashboard.js';
import type { DashboardStore } from './state.js';

/** Where Ink draws and reads keys; the process's own streams unless a test passes others. */
export interface ViewStreams {
  stdout?: NodeJS.WriteStream;
  stdin?: NodeJS.ReadStream;
  stderr?: NodeJS.WriteStream;
}

/**
 * A safety net only: Ink's trailing redraw is a timer of at most 33 ms set no later than the change,
 * so it fires before this one however busy the machine is. This fires only if Ink would never draw.
 */
const DRAW_TIMEOUT_MS = 2000;

export class LiveView {
  private readonly ink: Instance;
  /** Store changes so far, and how many of them the last frame Ink drew includes. */
  private changes = 0;
  private drawnChanges = -1;
  private waiters: Array<{ changes: number; resolve: () => void }> = [];
  private reportShown!: () => void;
  private readonly shown = new Promise<void>((resolve) => (this.reportShown = resolve));
  private closed = false;

  constructor(
    readonly store: DashboardStore,
    opts: { onStop?: (force: boolean) => void; streams?: ViewStreams } = {},
  ) {
    // subscribed before Ink renders, so this count moves before React re-renders on the same change
    store.subscribe(() => this.changes++);
    this.ink = render(<Dashboard store={store} onStop={opts.onStop} onReportShown={() => this.reportShown()} />, {
      ...opts.streams,
      exitOnCtrlC: false,
      patchConsole: false,
      // called by each redraw Ink actually makes, just before it writes the frame (in the same call)
      onRender: () => this.frameDrawn(),
    });
  }

  /** Resolves once Ink has drawn (written) a frame of the store's current state. */
  drawn(): Promise<void> {
    if (this.closed || this.drawnChanges >= this.changes) return Promise.resolve();
    const changes = this.changes;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, DRAW_TIMEOUT_MS);
      const waiter = { changes, resolve: done };
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.waiters.push(waiter);
    });
  }

  /** Take the live frame off the screen, after its final state has been drawn; then show the report as the last frame. */
  async showReport(report: string): Promise<void> {
    await this.takeDown();
    this.store.dispatch({ type: 'report', text: report });
    await this.shown;
  }

  /** Take the dashboard off the screen (after its final state has been drawn) and let go of the terminal. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.takeDown();
    this.closed = true;
    this.ink.unmount();
    await this.ink.waitUntilExit().catch(() => undefined);
    this.flushWaiters(Infinity);
  }

  /**
   * Draw the final live state, then replace it by an empty frame and let Ink draw that: the report
   * is written above Ink's last frame, which must be empty by then.
   */
  private async takeDown(): Promise<void> {
    if (this.store.getState().phase === 'report') return;
    await this.drawn();
    this.store.dispatch({ type: 'clear' });
    await this.drawn();
  }

  /** Each run's simulated second in the last frame drawn that had it running: where a stop ends the run on screen (its minute). */
  readonly shownAt = new Map<number, number>();

  private frameDrawn(): void {
    this.drawnChanges = this.changes;
    const s = this.store.getState();
    // every run's, not only the one charted: when it finishes, the charts move to one already hours in
    for (const r of Object.values(s.running)) this.shownAt.set(r.index, r.atSeconds);
    if (s.current) this.shownAt.set(s.current.index, s.current.atSeconds);
    this.flushWaiters(this.drawnChanges);
  }

  private flushWaiters(drawn: number): void {
    const ready = this.waiters.filter((w) => w.changes <= drawn);
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((w) => w.changes > drawn);
    for (const w of ready) w.resolve();
  }
}
