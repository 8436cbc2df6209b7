// A sweep's policies, one row each, filling in as each finishes: lag p99, peak memory, read p99, verdict.
import { Box, Text } from 'ink';
import { fmtMs, fmtSeconds, formatBytes } from './format.js';
import type { CurrentRun, DashboardState, PolicyState } from './state.js';
import { Verdict } from './Verdict.js';

const FIGURE = 13;

export function SweepRows({ state, color, maxRows }: { state: DashboardState; color: boolean; maxRows: number }) {
  if (state.mode !== 'sweep') return null;
  const width = Math.max(6, ...state.policies.map((p) => p.label.length)) + 2;
  // on a short terminal keep the first policy running in view: the rows around it, not the first ones
  const running = Math.max(0, state.policies.findIndex((p) => p.status === 'running'));
  const from = Math.max(0, Math.min(running - Math.floor(maxRows / 2), state.policies.length - maxRows));
  const shown = state.policies.slice(from, from + Math.max(1, maxRows));
  return (
    <Box flexDirection="column">
      <Text dimColor={color}>
        {'policy'.padEnd(width)}
        {'lag p99'.padEnd(FIGURE)}
        {'peak memory'.padEnd(FIGURE)}
        {'read p99'.padEnd(FIGURE)}SLO
      </Text>
      {shown.map((p, i) => (
        <PolicyRow key={p.label} policy={p} run={state.running[from + i]} width={width} color={color} />
      ))}
    </Box>
  );
}

function PolicyRow({ policy, run, width, color }: { policy: PolicyState; run: CurrentRun | undefined; width: number; color: boolean }) {
  const label = policy.label.padEnd(width);
  if (policy.status === 'waiting') return <Text dimColor={color}>{label}waiting</Text>;
  if (policy.status === 'running' || !policy.row) {
    const pct = run && run.durationSeconds > 0 ? Math.floor((run.atSeconds / run.durationSeconds) * 100) : 0;
    return (
      <Text>
        {label}running {pct}%
      </Text>
    );
  }
  if (policy.status === 'stopped') {
    return (
      <Text>
        {label}stopped at {fmtSeconds(policy.stoppedAtSeconds ?? 0)}: not compared
      </Text>
    );
  }
  const r = policy.row;
  return (
    <Text wrap="truncate-end">
      {label}
      {fmtSeconds(r.lagP99Seconds).padEnd(FIGURE)}
      {formatBytes(r.peakMemoryBytes).padEnd(FIGURE)}
      {fmtMs(r.readP99Ms).padEnd(FIGURE)}
      <Verdict pass={r.sloPass} color={color} />
      {r.sloPass ? '' : ` ${r.failed.join(',')}`}
    </Text>
  );
}
