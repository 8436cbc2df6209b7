// The faults section of a replay's report: each fault the replay injected (scenario events), when,
// what it broke, and what it cost: the posts and reads in flight at its start or due meanwhile, by
// answer, the first 201 after it, the event log's backlog and when it was back, and the fan-out lag
// paid. The reconciliation (in the reads section) says whether anything acknowledged was lost.
import type { RunResult } from '../sim/result.js';
import type { CrashFigures, FaultCost, OutageFigures } from '../sim/replay/result.js';
import { formatCount } from '../sim/scenario/units.js';
import { fmtSeconds, type Section } from './summary-lines.js';

type Replay = NonNullable<RunResult['replay']>;

const finite = (v: number | null | undefined): v is number => typeof v === 'number' && Number.isFinite(v);
const n = (v: number | null | undefined) => (finite(v) ? formatCount(v) : 'n/a');
const sec = (v: number | null | undefined, none = 'not within the run') => (finite(v) ? fmtSeconds(v) : none);

/** "of 40 posts due: 31 acknowledged (the latest 2.1 s late), 9 not (6 503, 3 network)", and the reads' line. */
function cost(f: FaultCost, firstFrom: string): string {
  const p = f.posts;
  const why = (parts: [number | undefined, string][]) => parts.filter(([v]) => finite(v) && v > 0).map(([v, w]) => `${n(v)} ${w}`).join(', ');
  const postsWhy = why([[p.status503, '503'], [p.status5xx, 'other 5xx'], [p.networkErrors, 'network'], [p.other, 'other']]);
  const parts = [`of ${n(p.due)} posts due ${n(p.acknowledged)} acknowledged${p.acknowledged > 0 ? ` (the latest ${fmtSeconds(p.maxWaitSeconds)} after its time)` : ''}, ${n(p.failed)} not${postsWhy ? ` (${postsWhy})` : ''}`];
  const r = f.reads;
  if (r) {
    const readsWhy = why([[r.status503, '503'], [r.status5xx, 'other 5xx'], [r.networkErrors, 'network'], [r.timeouts, 'timed out'], [r.dropped, 'dropped'], [r.statusOther, 'other']]);
    parts.push(`of ${n(r.due)} reads ${n(r.ok)} answered${r.due > r.ok ? `, ${n(r.due - r.ok)} not${readsWhy ? ` (${readsWhy})` : ''}` : ''}`);
  }
  if (f.reconciled) parts.push(`reconciled: ${n(f.reconciled.lost)} lost, ${n(f.reconciled.duplicated)} duplicated, ${n(f.reconciled.missingDeliveries)} with a delivery missing`);
  parts.push(`the first 201 ${finite(f.firstAckAfterSeconds) ? `${fmtSeconds(f.firstAckAfterSeconds)} after ${firstFrom}` : `after ${firstFrom}: none`}`);
  if (f.lag && finite(f.lag.worstP99Seconds)) parts.push(`fan-out lag p99 up to ${fmtSeconds(f.lag.worstP99Seconds)}${finite(f.lag.beforeP99Seconds) ? ` (${fmtSeconds(f.lag.beforeP99Seconds)} before any fault)` : ''}`);
  return parts.join('; ');
}

function crashRow(f: CrashFigures): [string, string] {
  const who = f.kind === 'apiCrash' ? 'the API' : `worker${f.workers.length === 1 ? '' : 's'} ${f.workers.join(', ')}`;
  return [
    f.kind === 'apiCrash' ? 'API crash' : 'worker crash',
    `at ${fmtSeconds(f.atSeconds)}: ${who} killed; started again at ${fmtSeconds(f.restartedAtSeconds)}, ready ${fmtSeconds(f.readyAfterSeconds)} later; ${cost(f, 'the restart')}; the backlog ${n(f.backlogBefore)} events before, ${n(f.backlogAtRestart)} at the restart, back after ${sec(f.recoveredAfterSeconds)}`,
  ];
}

function outageRow(f: OutageFigures): [string, string] {
  const service = f.kind === 'redisOutage' ? 'Redis' : 'Postgres';
  const how = f.mode === 'reset' ? `${n(f.connections.open)} connections reset, ${n(f.connections.refused)} refused meanwhile` : `${n(f.connections.open)} connections hung, ${n(f.connections.held)} more held meanwhile`;
  return [
    `${service} outage (${f.mode})`,
    `from ${fmtSeconds(f.atSeconds)} to ${fmtSeconds(f.endedAtSeconds)}: ${how}; ${cost(f, 'its end')}; the backlog ${n(f.backlogBefore)} events before, ${n(f.backlogAtEnd)} at its end, back after ${sec(f.recoveredAfterSeconds)}`,
  ];
}

export function faultSection(x: Replay): Section | null {
  const rows: [string, string][] = [
    ...(x.keyLosses ?? []).map((l): [string, string] => [
      l.kind === 'redisFlush' ? 'Redis flush' : 'event log loss',
      `at ${fmtSeconds(l.atSeconds)}: the event log's ${n(l.keys)} keys deleted${l.kind === 'redisFlush' ? ' (the cache keys: the cache loss in the reads section)' : ''}; the workers' group back after ${sec(l.groupBackAfterSeconds)}`,
    ]),
    ...(x.faults ?? []).map(crashRow),
    ...(x.outages ?? []).map(outageRow),
  ];
  return rows.length === 0 ? null : { title: 'Replay: faults injected, and what each cost', rows };
}
