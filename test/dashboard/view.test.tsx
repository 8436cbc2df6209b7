// The dashboard on a (fake) terminal through LiveView: the last live frame is drawn before the
// report replaces it, even when Ink's 33 ms redraw throttle holds that frame back and the main
// thread stays busy (the last messages, then the report files) until the dashboard is taken down.
import { EventEmitter } from 'node:events';
import { beforeAll, describe, expect, it, vi } from 'vitest';

// Ink writes nothing but the last frame under CI (is-in-ci, read once when Ink loads): this is a test
// of what a person at a terminal sees, so Ink must load as it does there.
vi.hoisted(() => {
  delete process.env.CI;
  delete process.env.CONTINUOUS_INTEGRATION;
});

const { initialState, DashboardStore } = await import('../../cli/dashboard/state.js');
const { LiveView } = await import('../../cli/dashboard/view.js');
const { messagesFor, recordRun, tinyPrepared } = await import('./fixture.js');
type RecordedRun = import('./fixture.js').RecordedRun;

/** A 120x40 terminal that keeps everything written to it. */
class FakeTty extends EventEmitter {
  isTTY = true;
  columns = 120;
  rows = 40;
  written = '';
  write = (s: string | Uint8Array, cb?: () => void): boolean => {
    this.written += typeof s === 'string' ? s : Buffer.from(s).toString('utf8');
    if (typeof cb === 'function') cb();
    return true;
  };
}

/** Keys never come: not a TTY, so the dashboard does not read them. */
class NoKeys extends EventEmitter {
  isTTY = false;
  setEncoding() {}
  setRawMode() {}
  resume() {}
  pause() {}
  ref() {}
  unref() {}
  read = () => null;
}

/** Hold the thread, as decoding the last messages and writing the report files do. */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

/** React renders a store change in a microtask: let it (Ink's redraw then happens at once, or goes on a timer). */
const committed = () => Promise.resolve();

function streams() {
  const stdout = new FakeTty();
  return { stdout, streams: { stdout: stdout as unknown as NodeJS.WriteStream, stderr: new FakeTty() as unknown as NodeJS.WriteStream, stdin: new NoKeys() as unknown as NodeJS.ReadStream } };
}

let push: RecordedRun;
beforeAll(() => {
  push = recordRun('push');
});

describe('taking the dashboard down', () => {
  it('draws the final minute (100% of the simulated clock) before the report, though it came inside the redraw throttle', async () => {
    const store = new DashboardStore(initialState(tinyPrepared().scenario, ['push'], 'run'));
    const { stdout, streams: io } = streams();
    const view = new LiveView(store, { streams: io });
    // start, minutes 1-19 in one batch, minute 20, finished
    const [start, minutes, lastMinute, finished] = messagesFor(0, push, 19);
    // the start comes within 33 ms of the first frame: drawn when the throttle's timer runs, after which ...
    store.dispatch(start);
    await view.drawn();
    // ... minutes 1-19 are drawn at once (the throttle's leading edge) ...
    store.dispatch(minutes);
    await committed();
    expect(stdout.written).toContain('simulated 0:19:00 / 0:20:00');
    // ... the last minute, finished and done come together, within 33 ms: Ink only puts their redraw
    // on a timer, and the thread stays busy past the throttle window (the command writing its report
    // files), so the timer has not run when the command takes the dashboard down
    store.dispatch(lastMinute);
    store.dispatch(finished);
    store.dispatch({ type: 'done' });
    await committed();
    busy(60);
    expect(stdout.written).not.toContain('simulated 0:20:00 / 0:20:00');
    await view.showReport('the report\n');
    await view.close();
    const out = stdout.written;
    const final = out.indexOf('simulated 0:20:00 / 0:20:00');
    expect(final).toBeGreaterThan(-1);
    expect(out.slice(final)).toMatch(/^simulated 0:20:00 \/ 0:20:00 .* 100%/);
    // the report comes after the final frame, and nothing is drawn after it
    const report = out.indexOf('the report\n');
    expect(report).toBeGreaterThan(final);
    expect(out.slice(report)).not.toContain('simulated');
  });

  it('drawn() resolves at once when the current state is on the screen, and after the next redraw when it is not', async () => {
    const store = new DashboardStore(initialState(tinyPrepared().scenario, ['push'], 'run'));
    const { stdout, streams: io } = streams();
    const view = new LiveView(store, { streams: io });
    const [start, first, second] = messagesFor(0, push, 1);
    await view.drawn();
    store.dispatch(start);
    await view.drawn();
    // the first minute is drawn at once, the second (within 33 ms) waits for Ink's timer
    store.dispatch(first);
    await committed();
    expect(stdout.written).toContain('simulated 0:01:00 / 0:20:00');
    await view.drawn();
    store.dispatch(second);
    await committed();
    busy(40);
    expect(stdout.written).not.toContain('simulated 0:02:00 / 0:20:00');
    await view.drawn();
    expect(stdout.written).toContain('simulated 0:02:00 / 0:20:00');
    await view.close();
    await view.drawn();
  });
});
