// The live view of `feedlab run` and `feedlab sweep`: title, simulated clock, sparklines with the
// SLO state and event markers, a sweep's policy rows, and the keys. Once the command hands it the
// final report, that report is the last frame: written as it is (no wrapping) and nothing redraws.
import { Box, Text, useInput, useStdin, useStdout } from 'ink';
import { useEffect, useSyncExternalStore } from 'react';
import { formatCount } from '../../sim/scenario/units.js';
import { Charts } from './Charts.js';
import { Clock } from './Clock.js';
import type { DashboardState, DashboardStore } from './state.js';
import { sloStates } from './format.js';
import { SweepRows } from './SweepRows.js';
import { Verdict } from './Verdict.js';

/** Colour unless NO_COLOR is set to something (https://no-color.org); the words are there either way. */
export const colorWanted = (env: NodeJS.ProcessEnv = process.env): boolean => !env.NO_COLOR;

export interface DashboardProps {
  store: DashboardStore;
  color?: boolean;
  /** q or Ctrl-C: the first asks the run to stop, a second (`force`) to quit without waiting. */
  onStop?: (force: boolean) => void;
  /** Called once the final report has been written. */
  onReportShown?: () => void;
}

/** Lines the dashboard takes besides the event legend and the sweep rows. */
const BASE_LINES = 15;

export function Dashboard({ store, color = colorWanted(), onStop, onReportShown }: DashboardProps) {
  const state = useSyncExternalStore(store.subscribe, store.getState);
  const { stdout, write } = useStdout();
  const { isRawModeSupported } = useStdin();
  useInput(
    (input, key) => {
      if (input === 'q' || (key.ctrl && input === 'c')) onStop?.(store.getState().stopRequested);
    },
    { isActive: Boolean(onStop) && isRawModeSupported === true && state.phase !== 'report' },
  );
  useEffect(() => {
    if (state.report === null) return;
    write(state.report);
    onReportShown?.();
  }, [state.report]);

  if (state.phase === 'report') return null;
  const width = stdout.columns || 80;
  // stay shorter than the terminal: a frame as tall as the screen makes Ink clear it on every redraw
  const room = Math.max(0, (stdout.rows || 24) - 1 - BASE_LINES);
  const sweepRows = state.mode === 'sweep' ? Math.max(1, Math.min(state.policies.length, room - 2)) : 0;
  const legend = Math.max(0, room - (state.mode === 'sweep' ? sweepRows + 2 : 0));
  return (
    <Box flexDirection="column">
      <Title state={state} color={color} />
      <Clock state={state} now={state.wallNow} color={color} width={width} />
      <Text> </Text>
      <Charts state={state} width={width} color={color} legendLines={legend} />
      <Text> </Text>
      <SloLine state={state} color={color} />
      {state.mode === 'sweep' ? (
        <>
          <Text> </Text>
          <SweepRows state={state} color={color} maxRows={sweepRows} />
        </>
      ) : null}
      <Text> </Text>
      <Keys state={state} active={Boolean(onStop)} color={color} />
    </Box>
  );
}

function Title({ state, color }: { state: DashboardState; color: boolean }) {
  const sc = state.scenario;
  const c = state.current;
  // a parallel sweep charts its lowest-numbered running policy and says how many run beside it
  const beside = Object.keys(state.running).length - 1;
  const policy = c
    ? state.mode === 'sweep'
      ? `policy ${c.index + 1}/${state.policies.length} ${c.policy}${beside > 0 ? ` (+${beside} running)` : ''}`
      : `policy ${c.policy}`
    : `${state.policies.length} ${state.policies.length === 1 ? 'policy' : 'policies'}`;
  const users = sc.population ?? sc.users;
  return (
    <Text bold={color} wrap="truncate-end">
      feedlab {state.source === 'replay' ? 'replay' : state.mode} · {sc.name} · {policy} · seed {sc.seed}
      {users ? ` · ${formatCount(users)} users` : ''}
    </Text>
  );
}

function SloLine({ state, color }: { state: DashboardState; color: boolean }) {
  const c = state.current;
  if (!c || !c.soFar) return <Text>SLO so far: -</Text>;
  const s = sloStates(state.slo, c.soFar);
  const checks = [s.fanoutLagP99, s.readP99, s.redisMemory];
  const failed = checks.filter((x) => x.pass === false);
  const names = { fanoutLagP99: 'fan-out lag p99', readP99: 'read p99', redisMemory: 'Redis memory' };
  // thresholds name statistics the snapshots do not carry (p99.9, the drain time): they are checked on the whole run
  const n = state.slo.thresholds?.length ?? 0;
  const later = n > 0 ? `; ${n} ${n === 1 ? 'threshold' : 'thresholds'} checked when the run ends` : '';
  return (
    <Text wrap="truncate-end">
      SLO so far: <Verdict pass={failed.length === 0} color={color} />
      {failed.length > 0 ? ` (${failed.map((x) => names[x.id]).join(', ')} over target${later})` : ` (every objective met${later})`}
    </Text>
  );
}

function Keys({ state, active, color }: { state: DashboardState; active: boolean; color: boolean }) {
  if (!active) return null;
  if (state.stopRequested) {
    const what = state.source === 'replay' ? 'stopping: the fan-out settles, then the partial report' : 'stopping at the minute shown';
    return <Text wrap="truncate-end">{what}; q or Ctrl-C again quits without a report</Text>;
  }
  return <Text dimColor={color} wrap="truncate-end">q or Ctrl-C: stop here and write the partial report</Text>;
}
