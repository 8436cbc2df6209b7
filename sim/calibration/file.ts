// The calibration file: the document as YAML, with a header saying what wrote it and how to apply
// it, the provenance and every measurement with its spread under `calibration:`, and the
// `infrastructure:` block in the scenario format's keys and units, each key with a comment saying
// what it is and how it was measured. sim/scenario/calibration.ts reads it back.
import { stringify } from 'yaml';
import { CALIBRATED_KEYS, type CalibratedKey } from '../scenario/calibration.js';
import { formatBytes } from '../scenario/units.js';
import { waitPerRun, waitPerSlice, type CoreWait } from '../replay/core-wait.js';
import { durationText, MIN_R_SQUARED, quantileKey, type CalibrationDocument, type Distribution, type FellBack } from './document.js';
import type { Fit, Spread } from './figures.js';

/** What each key of the block is, as its comment says. */
const KEY_NOTES: Record<CalibratedKey, string> = {
  writesPerSecondPerWorker: "1 / b of a running worker's writes of a post, a + b x followers (its eventWritesMs by size, measurements.workerBySize), else of a pipelined batch's wall time from calibrate's process (TimelineCache.pushEntries, one batch in flight)",
  'costs.rtt': 'one Redis round trip (PING) from a client process on this machine',
  'costs.zadd': "Redis's own time per timeline write: commandstats' EVALSHA usec over the timelines the batches wrote (an add call writes up to 50 on a standalone Redis)",
  'costs.batch': "a batch's wall time beyond its writes and one round trip: max(0, a - rtt) of the same line",
  'costs.zrange': "Redis's time of one page read of a list (ZREVRANGEBYSCORE as the read path sends it; commandstats): a of a + b x entries returned, else a full slice's read",
  'costs.zrangePerEntry': 'b of that line: each entry a read returns (reads of 1, 5 and 25 entries)',
  'costs.mgetPerKey': "Redis's time of an MGET of a page's post bodies, per key (commandstats)",
  'costs.expand': "a of a running worker's first follower page, a + b x followers (its eventFirstPageMs by size); where that line is unsound, the worker's level on b of calibrate's reads; else a of calibrate's reads of followersPage with the worker's dormancy filter, a + b x rows",
  'costs.expandPerFollower': 'b of that fit: each row (follower) more',
  'costs.eventStatements': "the worker's statement per post event before its fan-out (followerCount): a running worker's own figure as quantiles when measured (measurements.worker; drawn per event), else the median from calibrate's process",
  'costs.eventStatementsByIdle': "a running worker's median statement after each idle time before an event: posts by the hop's authors at each pace, the hop's own included, in one phase, each pace's typical idle time (e^-γ / its posts a second) to its median (measurements.statementsByIdle)",
  'costs.eventFirstPageByIdle': "a running worker's median first follower page of the same posts (10-30 followers) after each idle time (measurements.statementsByIdle)",
  'costs.eventWritesByIdle': "a running worker's median timeline writes of the same posts (one batch) after each idle time (measurements.statementsByIdle)",
  'costs.eventWritesSpread': "a running worker's posts of 30-1,000 followers (measurements.workerBySize), each over its size's median writes: the quantiles of that ratio, pooled over the sizes",
  'costs.eventStatementsGap': "the hop's typical idle time (e^-γ / its posts a second), at which costs.eventStatements was measured: the curves' reference point",
  'costs.pickup': "a post event in the log to an idle running worker starting on it (the stream entry id's ms to the worker's clock), drawn per event: the hop's events that found the worker waiting, each reading spread over its millisecond (measurements.worker.pickupIdleUnrounded)",
  'costs.rebuild': 'one missing timeline rebuilt from Postgres (rebuildTimeline + TimelineCache.rebuild, as the read path does)',
  postToLog: "from a post's createdAt to its event entering the event log (the stream entry id's ms), not to a worker taking it",
  'api.cpuPerRead': "the server process's CPU per GET /v1/feed page beyond its lists and posts (from /proc)",
  'api.cpuPerList': "CPU per merged list (timeline, own list, each pulled author): the slope over pages with 0-32 quiet pulled followees (empty lists), else 0-16 with full lists",
  'api.cpuPerListEntry': "CPU per entry a merged list returns: the full lists' slope less the empty ones', over a full slice's entries",
  'api.cpuPerPost': 'CPU per hydrated post: slope over pages of ?limit= 5-50',
  'api.cpuPerWrite': 'CPU per POST /v1/posts, the outbox relay included',
  'api.network': 'the HTTP round trip of GET /healthz, one at a time, less its CPU (0 when not above it)',
  'api.idleOverhead': "a paced read's mean service time beyond what the fits above give that page (its CPU, two round trips, its Redis work): the cost of finding the server idle",
  'api.idleCpu': "of api.idleOverhead, the server's own CPU: a paced read's CPU (from /proc, less the server's CPU with no request over as long) beyond the fits' CPU for that page",
  'api.backgroundCpu': "cores the server process keeps busy with no request (its timers, the relay's polls): its CPU from /proc over a second a sample, left alone after the paced reads",
  'api.spread': "a read's service time over its mean, one request at a time with idle gaps (a replay's pace): latency less api.network",
  'api.postListed': "the hop's posts: the server's own time from a post's creation to its author's list holding it (Server-Timing `listed` on each 201; a pulled post is delivered from then)",
};

const spread = (s: Spread, unit: (v: number) => string | number = durationText) => ({ median: unit(s.median), p10: unit(s.p10), p90: unit(s.p90), n: s.n });

const round = (v: number, digits = 4) => (Number.isFinite(v) ? Number(v.toPrecision(digits)) : null);

function fit(f: Fit, x: string) {
  return {
    intercept: durationText(f.intercept),
    slope: durationText(f.slope),
    rSquared: round(f.rSquared),
    points: f.points.map((p) => ({ [x]: p.x, ...spread(p) })),
  };
}

function distribution(d: Distribution, unit: (v: number) => string | number = durationText) {
  return { n: d.n, ...Object.fromEntries(d.points.map((q) => [quantileKey(q.p), unit(q.value)])) };
}

/** Each process's mean wait for a core each time it was put on one, its waits over its CPU time, and how many times (a process never on a core left out). */
function waitsBlock(waits: Record<string, CoreWait>): object {
  const on = Object.entries(waits).filter(([, w]) => w.slices > 0);
  return Object.fromEntries(on.map(([name, w]) => [name, { perSlice: durationText(waitPerSlice(w)), ofCpu: round(waitPerRun(w), 3), slices: w.slices }]));
}

/** The `calibration:` block: provenance and every measurement, durations with units. */
function provenanceBlock(doc: CalibrationDocument): object {
  const c = doc.calibration;
  const m = c.measurements;
  const api = m.api;
  return {
    machine: { hostname: c.machine.hostname, cpu: c.machine.cpu, cores: c.machine.cores, memory: formatBytes(c.machine.memoryBytes).replace(' ', '') },
    date: c.date,
    versions: c.versions,
    mode: c.mode,
    ...(c.target ? { target: c.target } : {}),
    contention: { otherShare: round(c.contention.otherShare, 3), contended: c.contention.contended, over: durationText(c.contention.overSeconds) },
    ...(c.coreWaits ? { coreWaits: waitsBlock(c.coreWaits) } : {}),
    samples: c.samples,
    world: c.world,
    measurements: {
      rtt: spread(m.rtt),
      timelineWrites: { ...fit(m.timelineWrites.fit, 'timelines'), redisPerWrite: spread(m.timelineWrites.redisPerWrite) },
      pageRead: spread(m.pageRead),
      ...(m.pageReadByEntries ? { pageReadByEntries: fit(m.pageReadByEntries, 'entries') } : {}),
      mgetPerKey: spread(m.mgetPerKey),
      expansion: fit(m.expansion, 'rows'),
      eventStatements: spread(m.eventStatements),
      rebuild: spread(m.rebuild),
      ...(api
        ? {
            api: {
              cpuAgainstLists: { atPosts: api.at.posts, ...(api.fullListEntries ? { entriesPerList: api.fullListEntries } : {}), ...fit(api.lists, 'lists') },
              ...(api.quietLists ? { cpuAgainstEmptyLists: { atPosts: api.at.posts, ...fit(api.quietLists, 'lists') } } : {}),
              cpuAgainstPosts: { atLists: api.at.lists, ...fit(api.posts, 'posts') },
              cpuPerWrite: spread(api.write),
              trivialRoundTrip: spread(api.trivialRoundTrip),
              trivialCpu: spread(api.trivialCpu),
              serviceTime: { mean: durationText(api.service.mean), ...distribution(api.service) },
              ...(api.service.cpu ? { pacedReadCpu: spread(api.service.cpu) } : {}),
              ...(api.service.idleCpuPerSecond ? { cpuPerSecondWithoutRequests: { pooled: api.service.idleCpuRate === undefined ? null : durationText(api.service.idleCpuRate), ...spread(api.service.idleCpuPerSecond) } } : {}),
            },
          }
        : {}),
      ...(m.postToLog ? { postToLog: distribution(m.postToLog) } : {}),
      ...(m.postListed ? { postListed: distribution(m.postListed) } : {}),
      ...(m.workerBySize
        ? {
            workerBySize: {
              events: m.workerBySize.events,
              firstPage: fit(m.workerBySize.firstPage, 'followers'),
              writes: fit(m.workerBySize.writes, 'followers'),
              ...(typeof m.workerBySize.redisSecondsPerWrite === 'number' ? { redisPerWrite: durationText(m.workerBySize.redisSecondsPerWrite) } : {}),
              ...(m.workerBySize.redisCommands ? { redisCommands: m.workerBySize.redisCommands } : {}),
              ...(m.workerBySize.writesSpread ? { writesOverMedian: distribution(m.workerBySize.writesSpread, (v) => round(v, 3)!) } : {}),
            },
          }
        : {}),
      ...(m.statementsByIdle
        ? {
            statementsByIdle: {
              referenceGap: durationText(m.statementsByIdle.referenceGap),
              points: m.statementsByIdle.points.map((p) => ({
                idleGap: durationText(p.gap),
                ...spread(p),
                ...(p.firstPage ? { firstPage: spread(p.firstPage) } : {}),
                ...(p.writes ? { writes: spread(p.writes) } : {}),
              })),
            },
          }
        : {}),
      ...(m.worker
        ? {
            worker: {
              source: m.worker.source,
              events: m.worker.events,
              ...Object.fromEntries((['pickup', 'statements', 'firstPage', 'writes', 'pickupIdle'] as const).map((k) => [k, m.worker![k].n > 0 ? { mean: durationText(m.worker![k].mean), ...distribution(m.worker![k]) } : { n: 0 }])),
              ...(m.worker.pickupIdle.n > 0 ? { pickupIdleUnrounded: distribution({ points: m.worker.pickupIdle.unrounded, n: m.worker.pickupIdle.n }) } : {}),
            },
          }
        : {}),
    },
    refused: c.refused.map((r) => `${r.key}: ${r.why}`),
    ...(c.fellBack.length > 0 ? { fellBack: c.fellBack.map(fellBackLine) } : {}),
  };
}

/** A key taken from calibrate's own measurement, and why; with the running worker's level kept beside it. */
function fellBackLine(f: FellBack): string {
  const kept = f.levelled ? ` (${f.levelled.key} ${durationText(f.levelled.value)}: the running worker's level on it)` : '';
  return `${f.keys.join(', ')}${kept}: ${f.why}`;
}

function indent(text: string, by: string): string {
  return text
    .trimEnd()
    .split('\n')
    .map((l) => by + l)
    .join('\n');
}

const flow = (o: Record<string, string | number>) => `{ ${Object.entries(o).map(([k, v]) => `${k}: ${v}`).join(', ')} }`;

/** The `infrastructure:` block, each key with its comment. */
function infrastructureBlock(doc: CalibrationDocument): string[] {
  const b = doc.infrastructure as Record<string, unknown>;
  const out = ['infrastructure:'];
  const opened = new Set<string>();
  // in CALIBRATED_KEYS's order, each under its parent
  for (const key of CALIBRATED_KEYS) {
    const [head, leaf] = key.split('.');
    const value = leaf === undefined ? b[head] : (b[head] as Record<string, unknown> | undefined)?.[leaf];
    if (value === undefined) continue;
    if (leaf !== undefined && !opened.has(head)) {
      opened.add(head);
      out.push(`  ${head}:`);
    }
    const pad = leaf === undefined ? '  ' : '    ';
    const text = typeof value === 'object' ? flow(value as Record<string, string | number>) : String(value);
    out.push(`${pad}# ${KEY_NOTES[key]}`, `${pad}${leaf ?? head}: ${text}`);
  }
  return out;
}

export function calibrationYaml(doc: CalibrationDocument, command: string): string {
  const c = doc.calibration;
  const where = c.mode === 'target' ? `against the deployment at ${c.target}` : "self-contained (a scratch database and key prefix on this machine's Redis and Postgres, removed after)";
  const header = [
    `feedlab calibration: the live stack's costs, written by \`${command}\` (feedlab ${doc.tool.version}),`,
    `${where}, on ${c.machine.hostname} at ${c.date}${c.contention.contended ? '; CONTENDED: other processes took ' + Math.round(c.contention.otherShare * 100) + '% of the machine' : ''}.`,
    'Apply it with `calibration: FILE` in a scenario (keys the scenario writes itself win), or with',
    '--calibration FILE on run, sweep, plan and replay (wins over the scenario and its include).',
    `Every figure is the median of ${c.samples} samples after a warm-up, with the p10-p90 of the samples; a cost`,
    `that grows with a size is a straight line, a + b x size, through the medians (refused below r² ${MIN_R_SQUARED}).`,
    ...(c.refused.length > 0 ? ['Refused (not written; the scenario\'s own value or the default applies):', ...c.refused.map((r) => `  ${r.key}: ${r.why}`)] : []),
    ...(c.fellBack.length > 0 ? ["From calibrate's own measurement, the running worker's being unsound:", ...c.fellBack.map((f) => `  ${fellBackLine(f)}`)] : []),
  ];
  return [
    ...header.map((l) => `# ${l}`),
    'calibration:',
    indent(stringify(provenanceBlock(doc), { lineWidth: 0, flowCollectionPadding: true }), '  '),
    ...infrastructureBlock(doc),
    '',
  ].join('\n');
}
