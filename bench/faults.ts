// The fault benchmark (issue 13): the shipped fault drill (scenarios/fault-drill.yaml: every fault
// the replay injects, once each, 18 s of wall time apart) replayed three times as a user runs it
// (`feedlab replay ... --json --quiet`, a child process), so each fault runs three times. Per fault:
// what it cost the posts and the reads, the first 201 after it, when the fan-out backlog was back,
// the fan-out lag paid; per run: the reconciliation (acknowledged posts lost or duplicated, committed
// without a 201). The anchor is the fault probe: across roughly 400k (post, follower) pairs,
// no acknowledged post lost or duplicated; before the outbox republish, losing the event log lost
// 192 of 199 acknowledged posts' fan-out.
import { max, median, min } from 'simple-statistics';
import type { RunResult } from '../sim/result.js';
import type { FaultCost, OutageFigures } from '../sim/replay/result.js';
import { f2, fmt, runCli } from './harness.js';

const DRILL = 'scenarios/fault-drill.yaml';
const RUNS = 3;
const RUN_TIMEOUT_MS = 15 * 60_000;

interface Row {
  fault: string;
  postsDue: number;
  acknowledged: number;
  failed: string;
  readsDue: number;
  readsFailed: string;
  firstAckSeconds: number;
  recoveredSeconds: number;
  lagP99Seconds: number;
  lagBeforeSeconds: number;
  reconciled: string;
}

/** "6 503, 2 network": the failures by answer. */
function why(parts: [number, string][]): string {
  const s = parts.filter(([v]) => v > 0).map(([v, w]) => `${v} ${w}`).join(', ');
  return s || 'none';
}

function costRow(fault: string, f: FaultCost, recovered: number): Row {
  const p = f.posts;
  const r = f.reads;
  return {
    fault,
    postsDue: p.due,
    acknowledged: p.acknowledged,
    failed: why([[p.status503, '503'], [p.status5xx, '5xx'], [p.networkErrors, 'net'], [p.other, 'other']]),
    readsDue: r.due,
    readsFailed: why([[r.status503, '503'], [r.status5xx, '5xx'], [r.networkErrors, 'net'], [r.timeouts, 'timeout'], [r.dropped, 'dropped'], [r.statusOther, 'other']]),
    firstAckSeconds: num(f.firstAckAfterSeconds),
    recoveredSeconds: num(recovered),
    lagP99Seconds: num(f.lag.worstP99Seconds),
    lagBeforeSeconds: num(f.lag.beforeP99Seconds),
    reconciled: f.reconciled ? `${f.reconciled.lost} lost, ${f.reconciled.duplicated} dup, ${f.reconciled.missingDeliveries} undelivered` : 'n/a',
  };
}

/** JSON carries NaN as null. */
const num = (v: number | null | undefined) => (typeof v === 'number' ? v : NaN);

function rows(x: NonNullable<RunResult['replay']>): Row[] {
  const out: Row[] = [];
  for (const f of x.faults) out.push(costRow(f.kind === 'apiCrash' ? 'apiCrash' : `workerCrash (${f.workers.length})`, f, num(f.recoveredAfterSeconds)));
  for (const o of x.outages as OutageFigures[]) out.push(costRow(`${o.kind} ${o.mode}`, o, num(o.recoveredAfterSeconds)));
  for (const l of x.keyLosses) {
    out.push({ fault: l.kind, postsDue: NaN, acknowledged: NaN, failed: '-', readsDue: NaN, readsFailed: '-', firstAckSeconds: NaN, recoveredSeconds: num(l.groupBackAfterSeconds), lagP99Seconds: NaN, lagBeforeSeconds: NaN, reconciled: '-' });
  }
  return out;
}

const range = (xs: number[], unit: string) => {
  const seen = xs.filter(Number.isFinite);
  if (seen.length === 0) return 'n/a';
  return seen.length === 1 ? f2(seen[0], unit) : `${f2(median(seen), unit)} (${f2(min(seen))}-${f2(max(seen))})`;
};

export async function benchFaults(): Promise<void> {
  const args = ['replay', DRILL, '--json', '--quiet'];
  console.log(`the fault drill ${RUNS} times: \`node dist/cli/main.js ${args.join(' ')}\` (a child process each; about 4 minutes each)`);
  const byFault = new Map<string, Row[]>();
  const recs: string[] = [];
  let lost = 0;
  let duplicated = 0;
  let acknowledged = 0;
  let checked = 0;
  for (let run = 1; run <= RUNS; run++) {
    const { code, stdout, stderr, seconds } = await runCli(args, { timeoutMs: RUN_TIMEOUT_MS });
    let doc: RunResult | null = null;
    try {
      doc = JSON.parse(stdout) as RunResult;
    } catch {
      // reported below
    }
    const x = doc?.replay;
    if (!x) {
      console.log(`  run ${run}: !!! no result document (exit ${code}, ${seconds.toFixed(0)} s): ${stderr.trim().split('\n').slice(-3).join(' | ') || 'no output'}`);
      continue;
    }
    const rec = x.reconciliation;
    const other = x.cpu.share ? `other processes ${x.cpu.share.other.toFixed(0)}% of 200%` : 'CPU not measured';
    console.log(
      `  run ${run}: exit ${code}, ${seconds.toFixed(0)} s wall (a ${x.mapping.wallSeconds.toFixed(0)} s window); ${other}${x.cpu.contended ? ' !!! contended !!!' : ''}; ` +
        (rec
          ? `reconciliation ${rec.ok ? 'ok' : 'FAILED'}: ${fmt(rec.acknowledged)} acknowledged, ${fmt(rec.stored)} stored, ${rec.lost} lost, ${rec.duplicated} duplicated, ` +
            `${rec.committedUnacknowledged.status503} committed after a 503; deliveries ${fmt(rec.deliveries.delivered)}/${fmt(rec.deliveries.checked)} checked, ${fmt(rec.deliveries.rebuiltOnRead)} rebuilt on read, ${rec.deliveries.missing} missing`
          : 'no reconciliation'),
    );
    if (rec) {
      lost += rec.lost + rec.deliveries.missing;
      duplicated += rec.duplicated;
      acknowledged += rec.acknowledged;
      checked += rec.deliveries.checked + rec.deliveries.pulledChecked;
      recs.push(rec.ok ? 'ok' : 'FAILED');
    }
    for (const r of rows(x)) byFault.set(r.fault, [...(byFault.get(r.fault) ?? []), r]);
  }
  console.log('\n  each fault over the runs (sums of posts and reads; median and range of the times):');
  console.log('  | fault | runs | posts due | acknowledged | failed (by answer) | reads due | reads failed | first 201 after (s) | backlog back after (s) | lag p99 (s) | before (s) | reconciled |');
  console.log('  |---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const [fault, rs] of byFault) {
    const sum = (k: 'postsDue' | 'acknowledged' | 'readsDue') => (rs.every((r) => Number.isFinite(r[k])) ? fmt(rs.reduce((a, r) => a + r[k], 0)) : '-');
    console.log(
      `  | ${fault} | ${rs.length} | ${sum('postsDue')} | ${sum('acknowledged')} | ${rs.map((r) => r.failed).join(' / ')} | ${sum('readsDue')} | ${rs.map((r) => r.readsFailed).join(' / ')} | ` +
        `${range(rs.map((r) => r.firstAckSeconds), '')} | ${range(rs.map((r) => r.recoveredSeconds), '')} | ${range(rs.map((r) => r.lagP99Seconds), '')} | ${range(rs.map((r) => r.lagBeforeSeconds), '')} | ${rs.map((r) => r.reconciled).join(' / ')} |`,
    );
  }
  console.log(
    `  RESULT faults: ${byFault.size} faults x ${recs.length} runs; reconciliation ${recs.join(', ') || 'none'}: ${lost} acknowledged posts or deliveries lost and ${duplicated} duplicated of ${fmt(acknowledged)} acknowledged posts ` +
      `and ${fmt(checked)} (post, follower) deliveries checked; anchor: the issue's probe lost and duplicated none over ~400k pairs, and an event log loss lost 192 of 199 posts' fan-out before the republish`,
  );
}
