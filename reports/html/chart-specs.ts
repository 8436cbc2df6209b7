// The charts of report.html as data (spec.ts), built from run and sweep documents. The page embeds
// them as JSON; the inlined chart code draws them.
import { logHurwitzZeta } from '../../sim/graph/powerlaw.js';
import type { FollowerDistribution } from '../../sim/graph/follower-distribution.js';
import type { RunResult } from '../../sim/result.js';
import type { SloCheck } from '../../sim/slo.js';
import { formatServers, type SweepResult, type SweepRow } from '../../sim/sweep.js';
import { formatBytes, formatCount } from '../../sim/scenario/units.js';
import { fmtMs, fmtSeconds } from '../summary-lines.js';
import type { ChartSpec, MarkerSpec, PanelSpec, ReferenceSpec, SeriesSpec } from './spec.js';

// Okabe-Ito: distinguishable with every common colour-vision deficiency
export const COLORS = {
  blue: '#0072B2',
  vermilion: '#D55E00',
  green: '#009E73',
  orange: '#E69F00',
  sky: '#56B4E9',
  purple: '#CC79A7',
  yellow: '#B8A000',
  grey: '#6b6b6b',
} as const;

const TIME_AXIS = (r: RunResult) => ({ label: 'simulated time', unit: 'time' as const, domain: [0, r.scenario.durationSeconds] as [number, number] });

/** Each per-minute value is drawn at the middle of its minute. */
function midpoints(r: RunResult): number[] {
  const iv = r.series.intervalSeconds;
  return r.series.startSeconds.map((s) => Math.min(s + iv / 2, r.scenario.durationSeconds));
}

function eventMarkers(r: RunResult): MarkerSpec[] {
  const markers = r.events.map((e) => ({ x: e.at, label: e.kind, detail: `${fmtSeconds(e.at)}  ${e.kind}: ${e.detail}` }));
  if (r.partial) markers.push({ x: r.partial.stoppedAtSeconds, label: 'stopped', detail: `the run was stopped at ${fmtSeconds(r.partial.stoppedAtSeconds)}` });
  return markers;
}

function slo(r: RunResult, id: SloCheck['id']): SloCheck | undefined {
  return r.summary.slo.checks.find((c) => c.id === id);
}

const sloRef = (label: string, value: number): ReferenceSpec => ({ label, value, color: COLORS.vermilion, fit: 'note' });

/** Whether a series' positive values span at least two decades (a log axis reads them better). */
export function spansDecades(values: readonly number[]): boolean {
  const positive = values.filter((v) => v > 0 && Number.isFinite(v));
  return positive.length > 1 && Math.max(...positive) / Math.min(...positive) >= 100;
}

export function lagBacklogChart(r: RunResult): ChartSpec {
  const x = midpoints(r);
  const lag = slo(r, 'fanoutLagP99');
  // the series samples the backlog once a minute; a burst can rise and drain between two samples
  const peak = r.summary.fanout.backlog.peakWrites;
  const sampledPeak = Math.max(0, ...r.series.backlogWrites);
  const peakRefs: ReferenceSpec[] = peak > 1.5 * sampledPeak ? [{ label: `peak ${formatCount(peak)}, mid-minute`, value: peak, color: COLORS.orange, dash: '2 3', fit: 'include' }] : [];
  // lags that span decades (a burst's minutes of lag beside quiet minutes' tens of ms) on a linear
  // axis flatten everything else, and the SLO line, onto zero: a log axis keeps both readable
  const lagLog = spansDecades([...r.series.lagP99Seconds, ...(lag ? [lag.target] : [])]);
  return {
    x: TIME_AXIS(r),
    crosshair: true,
    markers: eventMarkers(r),
    panels: [
      {
        title: `Fan-out lag p99 per follower, by minute of posting${lagLog ? ' (log scale)' : ''}`,
        y: { label: 'lag p99', unit: 'seconds', log: lagLog },
        series: [{ label: 'lag p99', color: COLORS.blue, x, y: r.series.lagP99Seconds }],
        refs: lag ? [sloRef(`SLO p99 ${fmtSeconds(lag.target)}`, lag.target)] : [],
      },
      {
        title: 'Fan-out backlog: timeline writes queued at the end of each minute',
        y: { label: 'queued writes', unit: 'count' },
        series: [{ label: 'backlog', color: COLORS.orange, x, y: r.series.backlogWrites }],
        refs: peakRefs,
        height: 150,
      },
    ],
  };
}

export function memoryChart(r: RunResult): ChartSpec {
  const x = midpoints(r);
  const budget = slo(r, 'redisMemory');
  return {
    x: TIME_AXIS(r),
    crosshair: true,
    markers: eventMarkers(r),
    panels: [
      {
        title: 'Redis memory for timelines and lists, against the budget',
        y: { label: 'memory', unit: 'bytes' },
        series: [
          { label: 'Redis memory', color: COLORS.blue, x, y: r.series.memoryBytes },
          { label: "documents' 24 B/entry", color: COLORS.grey, x, y: r.series.naiveMemoryBytes, style: 'dashed' },
        ],
        refs: budget ? [sloRef(`budget ${formatBytes(budget.target)}`, budget.target)] : [],
        height: 230,
      },
    ],
  };
}

export function readLatencyChart(r: RunResult): ChartSpec {
  const x = midpoints(r);
  const read = slo(r, 'readP99');
  const panels: PanelSpec[] = [
    {
      title: 'Home-feed read p99, by minute',
      y: { label: 'read p99', unit: 'seconds' },
      series: [{ label: 'read p99', color: COLORS.blue, x, y: r.series.readP99Ms.map((v) => v / 1000) }],
      refs: read ? [sloRef(`SLO p99 ${fmtMs(read.target)}`, read.target / 1000)] : [],
    },
    {
      title: 'Feed page reads per second',
      y: { label: 'reads/s', unit: 'count' },
      series: [
        { label: 'reads/s', color: COLORS.green, x, y: r.series.readsPerSecond },
        { label: 'cold reads/s', color: COLORS.vermilion, x, y: r.series.coldReadsPerSecond, style: 'dashed' },
      ],
      refs: [],
      height: 130,
    },
  ];
  return { x: TIME_AXIS(r), crosshair: true, markers: eventMarkers(r), panels };
}

/**
 * The follower distribution on log-log axes as a CCDF: the share of accounts with at least x
 * followers, exact at every bin's lower edge, and the fitted discrete power law over its tail,
 * P(X >= x) = nTail / N * ζ(α, x) / ζ(α, xmin).
 */
export function followersChart(f: FollowerDistribution): ChartSpec | null {
  if (f.bins.length === 0 || f.accounts === 0) return null;
  const x: number[] = [];
  const y: number[] = [];
  const titles: string[] = [];
  let atLeast = f.accounts - f.withoutFollowers;
  for (const b of f.bins) {
    x.push(b.lo);
    y.push(atLeast / f.accounts);
    const range = b.hi - 1 > b.lo ? `${formatCount(b.lo)}-${formatCount(Math.min(b.hi - 1, f.maxFollowers))}` : formatCount(b.lo);
    titles.push(`${range} followers: ${b.accounts.toLocaleString('en-US')} accounts; ${pct(atLeast / f.accounts)} have at least ${formatCount(b.lo)}`);
    atLeast -= b.accounts;
  }
  const series: SeriesSpec[] = [{ label: 'accounts (sampled graph)', color: COLORS.blue, x, y, style: 'points', titles }];
  const markers: MarkerSpec[] = [];
  const t = f.tail;
  if (t && t.xmin < f.maxFollowers) {
    const fx: number[] = [];
    const fy: number[] = [];
    const logZmin = logHurwitzZeta(t.alpha, t.xmin);
    const steps = 40;
    for (let i = 0; i <= steps; i++) {
      const v = Math.round(t.xmin * (f.maxFollowers / t.xmin) ** (i / steps));
      if (fx.length && v <= fx[fx.length - 1]) continue;
      fx.push(v);
      fy.push((t.nTail / f.accounts) * Math.exp(logHurwitzZeta(t.alpha, v) - logZmin));
    }
    series.push({ label: `power law α ${t.alpha.toFixed(2)}`, color: COLORS.vermilion, x: fx, y: fy, style: 'dashed' });
    markers.push({ x: t.xmin, label: `xmin ${formatCount(t.xmin)}`, detail: `the fitted tail starts at ${t.xmin} followers (${t.nTail.toLocaleString('en-US')} accounts)` });
  }
  return {
    x: { label: 'followers (sampled graph, log scale)', unit: 'count', log: true },
    markers,
    markerLabels: 'bottom', // the CCDF starts at the top left
    panels: [
      {
        title: 'Share of accounts with at least x followers (CCDF), log-log',
        y: { label: 'share of accounts', unit: 'share', log: true },
        series,
        refs: [],
        height: 280,
      },
    ],
  };
}

function pct(share: number): string {
  const p = share * 100;
  return `${p >= 1 ? p.toFixed(1) : p.toPrecision(2)}%`;
}

// ---- sweeps ----------------------------------------------------------------------------------

const THRESHOLD = /^threshold:(\d+)(.*)$/;

/** The suffix every policy of the sweep shares (`:skip-dormant`), dropped from labels. */
export function commonSuffix(policies: string[]): string {
  const suffixes = [':skip-dormant', ':all-followers'];
  return suffixes.find((s) => policies.length > 0 && policies.every((p) => p.endsWith(s))) ?? '';
}

// vermilion is kept for SLO targets and the recommended point, blue for the threshold curve
const OTHER_COLORS: Record<string, string> = {
  push: COLORS.green,
  pull: COLORS.purple,
  rate: COLORS.grey,
  'reader-cap': COLORS.sky,
  adaptive: COLORS.yellow,
};
const DASHES = ['2 3', '7 3', '4 2 1 2', '10 3 2 3', '1 2'];

interface Metric {
  title: string;
  label: string;
  unit: 'seconds' | 'bytes';
  value: (r: SweepRow) => number;
  text: (v: number) => string;
  slo: SloCheck['id'];
  sloLabel: (v: number) => string;
}

const METRICS: Metric[] = [
  {
    title: 'Fan-out lag p99 per follower',
    label: 'lag p99',
    unit: 'seconds',
    value: (r) => r.lagP99Seconds,
    text: fmtSeconds,
    slo: 'fanoutLagP99',
    sloLabel: (v) => `SLO p99 ${fmtSeconds(v)}`,
  },
  {
    title: 'Peak Redis memory',
    label: 'peak memory',
    unit: 'bytes',
    value: (r) => r.peakMemoryBytes,
    text: formatBytes,
    slo: 'redisMemory',
    sloLabel: (v) => `budget ${formatBytes(v)}`,
  },
  {
    title: 'Home-feed read p99',
    label: 'read p99',
    unit: 'seconds',
    value: (r) => r.readP99Ms / 1000,
    text: (v) => fmtMs(v * 1000),
    slo: 'readP99',
    sloLabel: (v) => `SLO p99 ${fmtMs(v * 1000)}`,
  },
];

/**
 * The trade-off curves of a sweep: lag p99, peak memory and read p99 against the threshold of
 * every `threshold:T` policy (log x), the recommended point ringed, every other policy as a
 * labelled horizontal line. Null when the sweep has no threshold policy.
 */
export function tradeoffChart(s: SweepResult): ChartSpec | null {
  const suffix = commonSuffix(s.rows.map((r) => r.policy));
  const short = (p: string) => (suffix && p.endsWith(suffix) ? p.slice(0, -suffix.length) : p);
  const groups = new Map<string, Array<{ t: number; row: SweepRow }>>();
  const others: SweepRow[] = [];
  for (const row of s.rows) {
    const m = THRESHOLD.exec(row.policy);
    if (!m) {
      others.push(row);
      continue;
    }
    const key = short(`threshold:T${m[2]}`);
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key)!.push({ t: Number(m[1]), row });
  }
  if (groups.size === 0) return null;
  const recommended = s.recommended?.policy;
  const checks = s.runs[0]?.summary.slo.checks ?? [];
  const curveColors = [COLORS.blue, COLORS.vermilion, COLORS.green, COLORS.purple];
  const panels: PanelSpec[] = METRICS.map((metric) => {
    const series: SeriesSpec[] = [];
    const highlights: PanelSpec['highlights'] = [];
    const values: number[] = [];
    [...groups.entries()].forEach(([key, points], gi) => {
      const sorted = [...points].sort((a, b) => a.t - b.t);
      const color = curveColors[gi % curveColors.length];
      series.push({
        label: key,
        color,
        x: sorted.map((p) => p.t),
        y: sorted.map((p) => metric.value(p.row)),
        style: 'linepoints',
        titles: sorted.map((p) => `${short(p.row.policy)}: ${metric.label} ${metric.text(metric.value(p.row))}, ${formatServers(p.row.servers.total)} servers, SLO ${p.row.sloPass ? 'PASS' : `FAIL ${p.row.failed.join(', ')}`}`),
      });
      for (const p of sorted) {
        values.push(metric.value(p.row));
        if (p.row.policy === recommended) highlights.push({ x: p.t, y: metric.value(p.row), label: `recommended: ${short(p.row.policy)}`, color: COLORS.vermilion });
      }
    });
    const refs: ReferenceSpec[] = others.map((row, i) => {
      const kind = row.policy.split(':')[0];
      const v = metric.value(row);
      values.push(v);
      const chosen = row.policy === recommended;
      return {
        label: `${chosen ? '★ ' : ''}${short(row.policy)} ${metric.text(v)}`,
        value: v,
        color: OTHER_COLORS[kind] ?? COLORS.grey,
        dash: DASHES[i % DASHES.length],
        width: chosen ? 3 : 1.5,
        fit: 'include',
      };
    });
    const check = checks.find((c) => c.id === metric.slo);
    if (check && Number.isFinite(check.target)) {
      const target = metric.unit === 'seconds' && metric.slo === 'readP99' ? check.target / 1000 : check.target;
      refs.push(sloRef(metric.sloLabel(target), target));
    }
    const positive = values.filter((v) => v > 0);
    // several orders of magnitude apart (pull's reads, push's lag): a log axis keeps every policy visible
    const log = positive.length > 1 && Math.max(...positive) / Math.min(...positive) > 30 && positive.length === values.length;
    return { title: `${metric.title}${log ? ' (log scale)' : ''}`, y: { label: metric.label, unit: metric.unit, log }, series, refs, highlights, height: 200 };
  });
  return {
    x: { label: 'threshold: authors with more followers than this are pulled (log scale)', unit: 'count', log: true },
    markers: [],
    panels,
  };
}
