// Sparklines of the run so far on the whole run's time axis, the SLO state beside the three series
// that have an objective, and a marker row with a letter under the minute each scenario event fired.
import { Box, Text } from 'ink';
import { maxOf } from '../../sim/metrics/series.js';
import { axisFor, eventMark, liveSparkline, markerRow } from './columns.js';
import { fmtMs, fmtRate, fmtSeconds, formatBytes, formatCount, sloStates, type SloState } from './format.js';
import type { DashboardState } from './state.js';
import { Verdict } from './Verdict.js';

const LABEL = 11;
const FIGURE = 10;
const SLO_TEXT = 22;
/** Label, two figures and the SLO column: what is left of the width goes to the sparklines. */
export const FIXED_WIDTH = LABEL + 2 + 2 * FIGURE + SLO_TEXT + 5;

interface Row {
  label: string;
  values: number[];
  fmt: (v: number) => string;
  slo?: SloState;
}

export function Charts({ state, width, color, legendLines = Infinity }: { state: DashboardState; width: number; color: boolean; legendLines?: number }) {
  const c = state.current;
  if (!c) return null;
  const axis = axisFor(c.durationSeconds, c.intervalSeconds, Math.max(10, width - FIXED_WIDTH));
  const slo = sloStates(state.slo, c.soFar);
  const rows: Row[] = [
    { label: 'posts/s', values: c.postsPerSecond, fmt: fmtRate },
    { label: 'writes/s', values: c.writesPerSecond, fmt: fmtRate },
    { label: 'backlog', values: c.backlogWrites, fmt: formatCount },
    { label: 'lag p99', values: c.lagP99Seconds, fmt: fmtSeconds, slo: slo.fanoutLagP99 },
    { label: 'memory', values: c.memoryBytes, fmt: formatBytes, slo: slo.redisMemory },
    { label: 'read p99', values: c.readP99Ms, fmt: fmtMs, slo: slo.readP99 },
  ];
  const chartWidth = axis.columns * axis.repeat;
  const pad = (s: string, n: number) => s.padEnd(n);
  return (
    <Box flexDirection="column">
      <Text dimColor={color} wrap="truncate-end">
        {pad('', LABEL)}
        {pad('', chartWidth)}  {pad('now', FIGURE)}{pad('peak', FIGURE)}{'SLO so far'}
      </Text>
      {rows.map((r) => (
        <ChartRow key={r.label} row={r} chart={pad(liveSparkline(r.values, axis), chartWidth)} color={color} />
      ))}
      <Text>
        {pad('events', LABEL)}
        {markerRow(c.events, axis, c.intervalSeconds)}
      </Text>
      {c.events.slice(0, legendLines).map((e) => (
        <Text key={`${e.at}-${e.kind}`} wrap="truncate-end">
          {pad('', LABEL)}
          {eventMark(e.kind)} {fmtSeconds(e.at).padEnd(7)} {e.kind}: {e.detail}
        </Text>
      ))}
    </Box>
  );
}

function ChartRow({ row, chart, color }: { row: Row; chart: string; color: boolean }) {
  const last = row.values.length > 0 ? row.values[row.values.length - 1] : NaN;
  const now = Number.isFinite(last) ? row.fmt(last) : '-';
  const peak = row.values.length > 0 ? row.fmt(maxOf(row.values)) : '-';
  return (
    <Text wrap="truncate-end">
      {row.label.padEnd(LABEL)}
      <Text color={color ? 'cyan' : undefined}>{chart}</Text>  {now.padEnd(FIGURE)}
      {peak.padEnd(FIGURE)}
      {row.slo ? (
        <>
          {row.slo.text.padEnd(SLO_TEXT)}
          <Verdict pass={row.slo.pass} color={color} />
        </>
      ) : null}
    </Text>
  );
}
