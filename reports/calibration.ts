// The terminal table of a calibration: every key of its infrastructure block with the value written,
// the spread of its samples (median, p10-p90, n) or its fit (a, b, r²), and a line per refusal.
import { CALIBRATED_KEYS, type CalibratedKey } from '../sim/scenario/calibration.js';
import type { CalibrationDocument, Distribution } from '../sim/calibration/document.js';
import type { Fit, Spread } from '../sim/calibration/figures.js';
import { formatBytes } from '../sim/scenario/units.js';

const us = (s: number): string => (!Number.isFinite(s) ? 'n/a' : Math.abs(s) >= 1e-3 ? `${Number((s * 1e3).toPrecision(3))} ms` : `${Number((s * 1e6).toPrecision(3))} us`);

const spread = (s: Spread): string => `median ${us(s.median)}, p10-p90 ${us(s.p10)}-${us(s.p90)}, n ${s.n}`;

const fit = (f: Fit, x: string): string =>
  `a ${us(f.intercept)} + b ${us(f.slope)} x ${x}, r² ${Number.isFinite(f.rSquared) ? f.rSquared.toFixed(4) : 'n/a'} over ${f.points.map((p) => p.x).join('/')}`;

/** The key is the running worker's fit by a post's size (measured, and not fallen back from). */
function byWorker(doc: CalibrationDocument, key: CalibratedKey): boolean {
  return !!doc.calibration.measurements.workerBySize && !(doc.calibration.fellBack ?? []).some((f) => f.keys.includes(key));
}

/** How each key was found: its samples' spread or its fit. */
function how(doc: CalibrationDocument, key: CalibratedKey): string {
  const m = doc.calibration.measurements;
  const a = m.api;
  switch (key) {
    case 'writesPerSecondPerWorker':
      return byWorker(doc, 'writesPerSecondPerWorker')
        ? `1/b of a running worker's writes, ${fit(m.workerBySize!.writes, 'followers')}; one batch at a time from calibrate's process ${fit(m.timelineWrites.fit, 'timelines')}`
        : `1/b of ${fit(m.timelineWrites.fit, 'timelines')}`;
    case 'costs.batch':
      return `a - rtt of the same fit`;
    case 'costs.rtt':
      return spread(m.rtt);
    case 'costs.zadd': {
      const per = m.workerBySize?.redisSecondsPerWrite;
      return typeof per === 'number' ? `${spread(m.timelineWrites.redisPerWrite)}; beside the running worker's posts by size ${us(per)} a write` : spread(m.timelineWrites.redisPerWrite);
    }
    case 'costs.zrange':
    case 'costs.zrangePerEntry':
      return m.pageReadByEntries && doc.infrastructure.costs?.zrangePerEntry !== undefined ? fit(m.pageReadByEntries, 'entries') : spread(m.pageRead);
    case 'costs.mgetPerKey':
      return spread(m.mgetPerKey);
    case 'costs.expand':
    case 'costs.expandPerFollower': {
      const levelled = (doc.calibration.fellBack ?? []).find((f) => f.levelled?.key === 'costs.expand')?.levelled;
      if (levelled) {
        return key === 'costs.expand'
          ? `a running worker's first page, its level ${us(levelled.value)} (its sizes' medians less b x followers, their median) on calibrate's process's b; its own line ${fit(m.workerBySize!.firstPage, 'followers')}`
          : `b of calibrate's process's ${fit(m.expansion, 'rows')} (the running worker's level kept as costs.expand)`;
      }
      return byWorker(doc, key)
        ? `a running worker's first page, ${fit(m.workerBySize!.firstPage, 'followers')}; from calibrate's process ${fit(m.expansion, 'rows')}`
        : fit(m.expansion, 'rows');
    }
    case 'costs.eventStatements': {
      const w = m.worker;
      return w && w.statements.n > 0
        ? `a running worker's, over ${w.statements.n} events (mean ${us(w.statements.mean)}); from calibrate's process ${spread(m.eventStatements)}`
        : spread(m.eventStatements);
    }
    case 'costs.eventStatementsByIdle':
    case 'costs.eventFirstPageByIdle':
    case 'costs.eventWritesByIdle':
    case 'costs.eventStatementsGap': {
      const idle = m.statementsByIdle;
      return idle ? `a running worker's posts at ${idle.points.length} paces, ${idle.points.map((p) => `n ${p.n}`).join(', ')}` : 'not measured';
    }
    case 'costs.eventWritesSpread': {
      const s = m.workerBySize?.writesSpread;
      return s ? `a running worker's ${s.n} posts by size, each over its size's median (measurements.workerBySize.writesOverMedian)` : 'not measured';
    }
    case 'costs.pickup': {
      const w = m.worker;
      if (!w) return 'not measured';
      const d = w.pickupIdle;
      const at = (p: number, of: Distribution = d) => us(of.points.find((q) => q.p === p)?.value ?? NaN);
      return `a running worker's ${d.n} of ${w.pickup.n} events that found it waiting, read to the ms on two clocks (p50 ${at(0.5)}, p99 ${at(0.99)}, mean ${us(d.mean)}; every event's p99 ${at(0.99, w.pickup)}), each reading spread over its ms`;
    }
    case 'costs.rebuild':
      return spread(m.rebuild);
    case 'postToLog':
      return m.postToLog ? `to the event log, n ${m.postToLog.n}` : 'not measured';
    case 'api.cpuPerRead':
      return a ? `the fits' value at ${a.at.lists} lists and ${a.at.posts} posts, less those` : 'not measured';
    case 'api.cpuPerList':
    case 'api.cpuPerListEntry':
      if (!a) return 'not measured';
      return a.quietLists && doc.infrastructure.api?.cpuPerListEntry !== undefined
        ? `empty lists ${fit(a.quietLists, 'lists')}; full (${a.fullListEntries} entries) b ${us(a.lists.slope)}`
        : fit(a.lists, 'lists');
    case 'api.cpuPerPost':
      return a ? fit(a.posts, 'posts') : 'not measured';
    case 'api.cpuPerWrite':
      return a ? spread(a.write) : 'not measured';
    case 'api.network':
      return a ? `GET /healthz ${us(a.trivialRoundTrip.median)} less its CPU ${us(a.trivialCpu.median)}` : 'not measured';
    case 'api.idleOverhead':
      return a ? `paced reads' mean service ${us(a.service.mean)} less the fits' ${us(a.service.modelled ?? NaN)}` : 'not measured';
    case 'api.idleCpu':
      return a?.service.cpu
        ? `paced reads' server CPU ${spread(a.service.cpu)} (less its ${us(a.service.idleCpuRate ?? a.service.idleCpuPerSecond?.median ?? NaN)} a second with no request) less the fits' CPU for the page, at most api.idleOverhead`
        : 'not measured';
    case 'api.backgroundCpu':
      return a?.service.idleCpuPerSecond ? `the server alone, its CPU a second pooled over ${a.service.idleCpuPerSecond.n} s (each second's: ${spread(a.service.idleCpuPerSecond)})` : 'not measured';
    case 'api.spread':
      return a ? `one at a time with idle gaps, n ${a.service.n}, mean service time ${us(a.service.mean)}` : 'not measured';
    case 'api.postListed':
      return m.postListed ? `the server's Server-Timing on the hop's posts, n ${m.postListed.n}` : 'not measured';
  }
}

function written(doc: CalibrationDocument, key: CalibratedKey): string | null {
  const [head, leaf] = key.split('.');
  const b = doc.infrastructure as Record<string, unknown>;
  const v = leaf === undefined ? b[head] : (b[head] as Record<string, unknown> | undefined)?.[leaf];
  if (v === undefined) return null;
  if (typeof v === 'object' && v !== null) return Object.entries(v).map(([k, x]) => `${k} ${x}`).join(', ');
  return String(v);
}

export function calibrationTable(doc: CalibrationDocument, file: string | null): string {
  const c = doc.calibration;
  const m = c.machine;
  const out = [
    `calibration of ${m.hostname} (${m.cores} x ${m.cpu}, ${formatBytes(m.memoryBytes)}), ${c.date}, ${c.mode === 'target' ? `target ${c.target}` : 'self-contained'}; other processes ${(c.contention.otherShare * 100).toFixed(0)}% of the machine${c.contention.contended ? ': CONTENDED' : ''}`,
    `each figure: the median of ${c.samples} samples after a warm-up${file ? `; written to ${file}` : ''}`,
    '',
  ];
  const rows = CALIBRATED_KEYS.map((key) => {
    const refusal = c.refused.find((r) => r.key === key);
    return [key, written(doc, key) ?? (refusal?.notMeasured ? 'not measured' : 'REFUSED'), refusal ? refusal.why : how(doc, key)];
  });
  const w0 = Math.max(...rows.map((r) => r[0].length));
  const w1 = Math.min(40, Math.max(...rows.map((r) => r[1].length)));
  for (const [k, v, h] of rows) out.push(`${k.padEnd(w0)}  ${v.length > w1 ? v : v.padEnd(w1)}  ${h}`);
  return out.join('\n') + '\n';
}
