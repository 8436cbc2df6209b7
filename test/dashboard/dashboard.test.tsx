// The dashboard's frames, fed the snapshots of a real (tiny) run: they show that run's figures.
import chalk from 'chalk';
import { render } from 'ink-testing-library';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { axisFor, columnOfMinute } from '../../cli/dashboard/columns.js';
import { FIXED_WIDTH } from '../../cli/dashboard/Charts.js';
import { colorWanted, Dashboard } from '../../cli/dashboard/Dashboard.js';
import { DashboardStore, initialState, type LiveMessage } from '../../cli/dashboard/state.js';
import { fmtMs, fmtSeconds } from '../../reports/summary-lines.js';
import { sweepTable } from '../../reports/sweep.js';
import { terminalReport } from '../../reports/terminal.js';
import { SERIES_INTERVAL } from '../../sim/model/simulation.js';
import { maxOf } from '../../sim/metrics/series.js';
import { formatBytes } from '../../sim/scenario/units.js';
import { parseThreshold } from '../../sim/scenario/thresholds.js';
import { sloVerdict } from '../../sim/slo.js';
import { recommend, sweepRow, type SweepResult } from '../../sim/sweep.js';
import { messagesFor, recordRun, tinyPrepared, type RecordedRun } from './fixture.js';

/** ink-testing-library's terminal is 100 columns wide. */
const WIDTH = 100;
const LABEL = 11;
const ANSI = /\x1b\[/;

/** A wall clock that moves 100 ms per message, so the ETA is the same on every machine. */
function fakeClock(): () => number {
  let t = 1_000_000;
  return () => (t += 100);
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

function feed(store: DashboardStore, msgs: LiveMessage[]): void {
  for (const m of msgs) store.dispatch(m);
}

function line(frame: string, label: string): string {
  const l = frame.split('\n').find((x) => x.startsWith(label));
  if (l === undefined) throw new Error(`no "${label}" line in:\n${frame}`);
  return l;
}

let push: RecordedRun;
beforeAll(() => {
  // push sends the two celebrities' burst posts to 150k followers each through two workers: the lag SLO fails
  push = recordRun('push');
});

afterEach(() => {
  chalk.level = 0;
});

describe('feedlab run dashboard', () => {
  it("shows the run's figures as they arrive, the burst marker under its minute, and the SLO in words", async () => {
    const sc = tinyPrepared().scenario;
    const store = new DashboardStore(initialState(sc, ['push'], 'run'), fakeClock());
    const { lastFrame, unmount } = render(<Dashboard store={store} color={false} />);
    store.dispatch({ type: 'prepare', fraction: 0.5, detail: 'graph drawing followees' });
    await settle();
    expect(lastFrame()).toMatch(/preparing .* 50%  graph drawing followees/);

    const msgs = messagesFor(0, push, 1);
    // start and the first four minutes: before the burst at 5 min
    feed(store, msgs.slice(0, 5));
    await settle();
    let frame = lastFrame()!;
    expect(frame).toContain('feedlab run · tiny · policy push:skip-dormant · seed 7 · 500k users');
    expect(frame).toContain('simulated 0:04:00 / 0:20:00');
    expect(line(frame, 'events')).not.toContain('B');
    expect(frame).not.toContain('celebrityBurst');
    const early = push.snapshots.slice(0, 4);
    expect(line(frame, 'lag p99')).toContain(fmtSeconds(maxOf(early.map((s) => s.lagP99Seconds))));
    expect(line(frame, 'memory')).toContain(formatBytes(early[3].memoryBytes));
    // at 5:00 the burst fires: its marker and its line appear
    feed(store, msgs.slice(5, 6));
    await settle();
    expect(lastFrame()).toContain('simulated 0:05:00 / 0:20:00');
    expect(line(lastFrame()!, 'events')).toContain('B');

    feed(store, msgs.slice(6, -1));
    await settle();
    frame = lastFrame()!;
    const last = push.snapshots[push.snapshots.length - 1];
    expect(frame).toContain('simulated 0:20:00 / 0:20:00');
    expect(frame).toContain('100%');
    // lag p99: this minute, the worst minute, the run's p99 against the objective, and the verdict
    const lag = line(frame, 'lag p99');
    expect(lag).toContain(fmtSeconds(last.lagP99Seconds));
    expect(lag).toContain(fmtSeconds(maxOf(push.snapshots.map((s) => s.lagP99Seconds))));
    expect(lag).toContain(`${fmtSeconds(last.soFar.followerLagP99Seconds)} / 50 ms`);
    expect(lag).toMatch(/FAIL$/);
    expect(push.result.summary.slo.checks[0].pass).toBe(false);
    // memory against its budget, read p99 against its objective
    const memory = line(frame, 'memory');
    expect(memory).toContain(formatBytes(last.memoryBytes));
    expect(memory).toContain(`${formatBytes(last.soFar.peakMemoryBytes)} / 1 TB`);
    expect(memory).toMatch(/PASS$/);
    expect(line(frame, 'read p99')).toContain(`${fmtMs(last.soFar.readP99Ms)} / 100 ms`);
    expect(line(frame, 'read p99')).toMatch(/PASS$/);
    expect(frame).toContain('SLO so far: FAIL (fan-out lag p99 over target)');
    // the marker sits under the burst's minute, where the lag sparkline peaks
    const axis = axisFor(sc.duration, SERIES_INTERVAL, WIDTH - FIXED_WIDTH);
    const at = LABEL + columnOfMinute(axis, 5) * axis.repeat;
    expect(line(frame, 'events').indexOf('B')).toBe(at);
    expect(line(frame, 'lag p99')[at]).toBe('█');
    expect(frame).toMatch(/B 5 min\s+celebrityBurst: 2 accounts post within 30s/);

    // the last frame is the report, exactly
    feed(store, [msgs[msgs.length - 1], { type: 'done' }]);
    const report = terminalReport(push.result);
    store.dispatch({ type: 'clear' });
    store.dispatch({ type: 'report', text: report });
    await settle();
    expect(lastFrame()).toBe(report);
    unmount();
  });

  it('NO_COLOR: words only, no escape codes; with colour the words stay', async () => {
    expect(colorWanted({ NO_COLOR: '1' })).toBe(false);
    expect(colorWanted({})).toBe(true);
    const sc = tinyPrepared().scenario;
    chalk.level = 1; // as on a colour terminal: only the color prop decides
    const plain = new DashboardStore(initialState(sc, ['push'], 'run'), fakeClock());
    const a = render(<Dashboard store={plain} color={false} />);
    const coloured = new DashboardStore(initialState(sc, ['push'], 'run'), fakeClock());
    const b = render(<Dashboard store={coloured} color={true} />);
    const msgs = messagesFor(0, push, 5).slice(0, -1);
    feed(plain, msgs);
    feed(coloured, msgs);
    await settle();
    for (const f of a.frames) expect(f).not.toMatch(ANSI);
    expect(a.lastFrame()).toMatch(/lag p99 .*FAIL/);
    expect(a.lastFrame()).toMatch(/memory .*PASS/);
    expect(b.lastFrame()).toMatch(ANSI);
    expect(b.lastFrame()).toContain('\x1b[31m'); // FAIL in red
    expect(b.lastFrame()).toContain('\x1b[32m'); // PASS in green
    expect(b.lastFrame()).toContain('FAIL');
    expect(b.lastFrame()).toContain('PASS');
    a.unmount();
    b.unmount();
  });

  it('q asks the run to stop at the minute shown, a second q quits; the frame says it is stopping and shows no later minute', async () => {
    const sc = tinyPrepared().scenario;
    const store = new DashboardStore(initialState(sc, ['push'], 'run'), fakeClock());
    const stops: boolean[] = [];
    const onStop = (force: boolean) => {
      stops.push(force);
      // as session.tsx does: the minute on screen
      store.dispatch({ type: 'stop', atSeconds: store.getState().current!.atSeconds });
    };
    const { lastFrame, stdin, unmount } = render(<Dashboard store={store} color={false} onStop={onStop} />);
    const messages = messagesFor(0, push, 4);
    feed(store, messages.slice(0, 3));
    await settle();
    expect(lastFrame()).toContain('q or Ctrl-C: stop here and write the partial report');
    expect(lastFrame()).toContain('simulated 0:08:00 / 0:20:00');
    stdin.write('q');
    await settle();
    expect(stops).toEqual([false]);
    expect(store.getState().stopAtSeconds).toBe(480);
    expect(lastFrame()).toContain('stopping at the minute shown');
    expect(lastFrame()).toMatch(/wall \S+\s+stopping/);
    // the minutes the simulation ran past the screen before it saw the stop are not drawn
    feed(store, messages.slice(3, 5));
    await settle();
    expect(lastFrame()).toContain('simulated 0:08:00 / 0:20:00');
    expect(store.getState().current!.memoryBytes).toHaveLength(8);
    stdin.write('\x03'); // Ctrl-C
    await settle();
    expect(stops).toEqual([false, true]);
    unmount();
  });
});

describe('feedlab sweep dashboard', () => {
  it('fills in one row per policy as each finishes, and ends on the sweep table', async () => {
    const specs = ['push', 'threshold:25000', 'pull'];
    const runs = specs.map((s) => (s === 'push' ? push : recordRun(s)));
    const sc = tinyPrepared().scenario;
    const store = new DashboardStore(initialState(sc, specs, 'sweep'), fakeClock());
    const { lastFrame, unmount } = render(<Dashboard store={store} color={false} />);
    const rowOf = (frame: string, spec: string) => line(frame, `${spec} `);
    const figures = (r: RunResult) => {
      const row = sweepRow(r, sc.infrastructure.writesPerSecondPerWorker);
      return [fmtSeconds(row.lagP99Seconds), formatBytes(row.peakMemoryBytes), fmtMs(row.readP99Ms)];
    };

    feed(store, messagesFor(0, runs[0]).slice(0, 2));
    await settle();
    let frame = lastFrame()!;
    expect(frame).toContain('policy 1/3 push:skip-dormant');
    expect(rowOf(frame, 'push')).toMatch(/running \d+%/);
    expect(rowOf(frame, 'threshold:25000')).toMatch(/waiting$/);
    expect(rowOf(frame, 'pull')).toMatch(/waiting$/);

    for (let i = 0; i < runs.length; i++) {
      feed(store, messagesFor(i, runs[i]).slice(i === 0 ? 2 : 0));
      await settle();
      frame = lastFrame()!;
      for (let j = 0; j < runs.length; j++) {
        const row = rowOf(frame, specs[j]);
        if (j <= i) {
          for (const f of figures(runs[j].result)) expect(row).toContain(f);
          expect(row).toContain(runs[j].result.summary.slo.pass ? 'PASS' : 'FAIL fanoutLagP99');
        } else {
          expect(row).toMatch(/waiting$/);
        }
      }
    }
    expect(rowOf(frame, 'push')).toMatch(/FAIL fanoutLagP99$/);
    expect(rowOf(frame, 'pull')).toMatch(/PASS$/);

    store.dispatch({ type: 'done' });
    const results = runs.map((r) => r.result);
    const rows = results.map((r) => sweepRow(r, sc.infrastructure.writesPerSecondPerWorker));
    const sweep: SweepResult = { schema: 'feedlab.sweep/1', scenario: results[0].scenario, rows, recommended: recommend(rows), runs: results };
    const table = sweepTable(sweep);
    store.dispatch({ type: 'clear' });
    store.dispatch({ type: 'report', text: table });
    await settle();
    expect(lastFrame()).toBe(table);
    unmount();
  });
});

type RunResult = RecordedRun['result'];

describe('a parallel sweep on the dashboard', () => {
  it("charts the lowest-numbered policy running, each other's progress in its row, and moves on when it finishes", async () => {
    const specs = ['push', 'pull'];
    const runs = [push, recordRun('pull')];
    const sc = tinyPrepared().scenario;
    const store = new DashboardStore(initialState(sc, specs, 'sweep'), fakeClock());
    const { lastFrame, unmount } = render(<Dashboard store={store} color={false} />);
    const [a, b] = [messagesFor(0, runs[0], 5), messagesFor(1, runs[1], 5)];
    // both start; pull runs ahead: 15 of its 20 minutes against push's 5
    feed(store, [a[0], b[0], a[1], b[1], b[2], b[3]]);
    await settle();
    let frame = lastFrame()!;
    expect(frame).toContain('policy 1/2 push:skip-dormant (+1 running)');
    expect(frame).toMatch(/simulated 0:05:00 \/ 0:20:00/);
    expect(line(frame, 'push ')).toMatch(/running 25%$/);
    expect(line(frame, 'pull ')).toMatch(/running 75%$/);
    // the sweep is (5 + 15) / 40 simulated: the ETA is the wall time so far again (fakeClock: 0.1 s a message)
    expect(frame).toMatch(/ETA 0\.5s/);
    // pull finishes first: its row fills in, the charts stay on push
    feed(store, b.slice(4));
    await settle();
    frame = lastFrame()!;
    expect(frame).toContain('policy 1/2 push:skip-dormant ·');
    expect(line(frame, 'pull ')).toContain(fmtSeconds(sweepRow(runs[1].result, sc.infrastructure.writesPerSecondPerWorker).lagP99Seconds));
    expect(line(frame, 'push ')).toMatch(/running 25%$/);
    // push goes on alone and finishes: still on screen, at its last minute
    feed(store, a.slice(2));
    await settle();
    frame = lastFrame()!;
    expect(frame).toContain('policy 1/2 push:skip-dormant ·');
    expect(frame).toMatch(/simulated 0:20:00 \/ 0:20:00/);
    expect(line(frame, 'push ')).toMatch(/FAIL fanoutLagP99$/);
    unmount();
  });

  it('moves the charts to the next policy running, its minutes from its start, when the one on screen finishes', async () => {
    const runs = [push, recordRun('pull')];
    const sc = tinyPrepared().scenario;
    const store = new DashboardStore(initialState(sc, ['push', 'pull'], 'sweep'), fakeClock());
    const [a, b] = [messagesFor(0, runs[0], 5), messagesFor(1, runs[1], 5)];
    feed(store, [a[0], b[0], b[1], b[2], ...a.slice(1)]);
    const s = store.getState();
    expect(s.current?.index).toBe(1);
    expect(s.current?.atSeconds).toBe(600);
    expect(s.current?.memoryBytes).toEqual(runs[1].snapshots.slice(0, 10).map((m) => m.memoryBytes));
    expect(Object.keys(s.running)).toEqual(['1']);
    expect(s.policies.map((p) => p.status)).toEqual(['finished', 'running']);
  });
});

describe('the dashboard with slo.thresholds', () => {
  it('the verdict line says the thresholds are checked when the run ends; the final report has them', async () => {
    const base = tinyPrepared().scenario;
    const thresholds = [parseThreshold('fanoutLag', 'p99.9 < 1h'), parseThreshold('read', 'max < 1us')];
    const sc = { ...base, slo: { ...base.slo, thresholds } };
    const store = new DashboardStore(initialState(sc, ['push'], 'run'), fakeClock());
    const { lastFrame, unmount } = render(<Dashboard store={store} color={false} />);
    const msgs = messagesFor(0, push, 4);
    feed(store, msgs.slice(0, -1));
    await settle();
    expect(lastFrame()).toContain('SLO so far: FAIL (fan-out lag p99 over target; 2 thresholds checked when the run ends)');
    // the report the dashboard gives way to is the run's, thresholds and all
    const result = { ...push.result, summary: { ...push.result.summary, slo: sloVerdict(sc, push.result) } };
    const report = terminalReport(result);
    expect(report).toMatch(/ {2}FAIL {2}home-feed read max: .* \(threshold < 1 us\)\n/);
    store.dispatch({ type: 'clear' });
    store.dispatch({ type: 'report', text: report });
    await settle();
    expect(lastFrame()).toBe(report);
    unmount();
  });
});
