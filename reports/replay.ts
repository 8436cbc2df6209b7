// The sections a replay's document adds to its report: how the scenario was mapped onto the live
// stack, what the driver offered and sent, and each measured figure beside its other sources (the
// workers' histograms and the probes, the Redis counter and commandstats, MEMORY USAGE and the
// simulator's memory model, the client's latency and the server's own histogram), and where the
// CPU went.
import type { RunResult } from '../sim/result.js';
import type { CpuShare } from '../sim/replay/cpu.js';
import { waitPerRun, waitPerSlice } from '../sim/replay/core-wait.js';
import { formatBytes, formatCount } from '../sim/scenario/units.js';
import { faultSection } from './replay-faults.js';
import { fmtMs, fmtRate, fmtSeconds, type Section } from './summary-lines.js';

const finite = (v: number | null | undefined): v is number => typeof v === 'number' && Number.isFinite(v);
const ratio = (v: number | null | undefined) => (finite(v) ? `${v.toFixed(2)}x` : 'n/a');
const pct = (v: number | null | undefined) => (finite(v) ? `${v.toFixed(0)}%` : 'n/a');
const n = (v: number | null | undefined) => (finite(v) ? formatCount(v) : 'n/a');
const ms = (v: number | null | undefined) => (finite(v) ? fmtMs(v) : 'n/a');
const sec = (v: number | null | undefined) => (finite(v) ? fmtSeconds(v) : 'n/a');

/** Each process's resident memory, first sample to last and its peak: whether it levels off. */
function residentRow(x: NonNullable<RunResult['replay']>): [string, string][] {
  const pm = x.processMemory;
  if (!pm || pm.atSeconds.length === 0) return [];
  const parts = Object.entries(pm.residentBytes).map(([name, xs]) => {
    const seen = xs.filter(finite);
    return seen.length === 0 ? `${name} n/a` : `${name} ${formatBytes(seen[0])} to ${formatBytes(seen[seen.length - 1])} (peak ${formatBytes(Math.max(...seen))})`;
  });
  return [['resident memory', `${parts.join(', ')}, over ${fmtSeconds(pm.atSeconds[pm.atSeconds.length - 1])}`]];
}

export function replaySections(r: RunResult): Section[] {
  const x = r.replay;
  if (!x) return [];
  const m = x.mapping;
  const o = x.offered;
  const d = x.driver;
  const t = d.totals;
  const lost = (k: typeof t.reads) => k.status4xx + k.status429 + k.status5xx + k.status503 + k.statusOther + k.networkErrors + k.timeouts + k.dropped;
  const sections: Section[] = [
    {
      title: 'Replay: what ran',
      rows: [
        ['stack', `${x.mode === 'self-contained' ? `self-contained at ${x.target} (database ${x.scratch?.database}, key prefix ${x.scratch?.keyPrefix}), removed afterwards` : `the deployment at ${x.target}`}`],
        ['world', `${formatCount(m.users)} users, ${formatCount(m.follows)} follows, ${formatCount(x.world.historyPosts)} posts of the lease window; ${m.warm ? 'timelines and followee sets warm' : 'caches cold'}; ${x.mode === 'target' ? "the deployment's fan-out workers" : `fan-out workers ${m.workers.started} (asked ${m.workers.asked}, cap ${m.workers.cap})`}`],
        ['time', `x${m.timeScale}: ${fmtSeconds(m.simulatedSeconds)} simulated in ${fmtSeconds(m.wallSeconds)} of wall time`],
        ['offered', `posts ${fmtRate(o.postsPerSecond.mean)} mean, ${fmtRate(o.postsPerSecond.peak)} peak; feed pages ${fmtRate(o.readsPerSecond.mean)} mean, ${fmtRate(o.readsPerSecond.peak)} peak (over 5 s)`],
        ['schedule', `${formatCount(x.schedule.posts)} posts, ${formatCount(x.schedule.sessions)} sessions, ${formatCount(x.schedule.pages)} pages; sha256 ${x.schedule.digest.slice(0, 16)}`],
        ...m.notes.map((note): [string, string] => ['mapping', note]),
      ],
    },
    {
      title: 'Replay: the driver (open model, latency from the intended send)',
      rows: [
        ['reads', `${n(t.reads.completed)} of ${n(t.reads.offered)} answered 2xx; ${n(lost(t.reads))} not (${n(t.reads.status503)} 503, ${n(t.reads.status5xx)} other 5xx, ${n(t.reads.status4xx + t.reads.status429)} 4xx, ${n(t.reads.networkErrors)} network errors, ${n(t.reads.timeouts)} timeouts, ${n(t.reads.dropped)} dropped)`],
        ['posts', `${n(t.posts.completed)} of ${n(t.posts.offered)} answered 201; ${n(lost(t.posts))} not (${n(t.posts.status503)} 503, ${n(t.posts.timeouts)} timeouts, ${n(t.posts.dropped)} dropped)`],
        ['sent late (> 1 ms)', `${n(t.reads.lateGenerator + t.posts.lateGenerator)} by the driver, ${n(t.reads.lateNoConnection + t.posts.lateNoConnection)} waiting for a connection; send delay p99 ${ms(d.latency.sendDelay.p99Ms)}`],
        ['read latency from the send', `p50 ${ms(d.latency.reads.fromSent.p50Ms)}, p99 ${ms(d.latency.reads.fromSent.p99Ms)} (what a closed-loop tool would report)`],
        ['post latency', `p50 ${ms(d.latency.posts.fromIntended.p50Ms)}, p99 ${ms(d.latency.posts.fromIntended.p99Ms)}`],
        ['this process', `driver, probes and samplers: ${d.driver.cpuSeconds.toFixed(1)} CPU s (${n(d.driver.cpuMicrosPerRequest)} us a request), event-loop delay p99 ${ms(d.driver.loopDelayP99Ms)}; connections ${d.connections.peak} at most, ${d.connections.lost} lost`],
      ],
    },
  ];
  const rec = x.reconciliation;
  if (rec) {
    const d = rec.deliveries;
    const c = rec.committedUnacknowledged;
    sections.push({
      title: `Replay: reconciliation, once settled${rec.ok ? ': nothing lost' : ': LOSS FOUND (exit 1)'}`,
      rows: [
        ['acknowledged posts', `${n(rec.stored)} of ${n(rec.acknowledged)} answered 201 are in Postgres${rec.lost > 0 ? `; ${n(rec.lost)} LOST (${rec.examples.lost.slice(0, 3).join(', ')})` : ''}; ${n(rec.duplicated)} scheduled posts stored twice`],
        ['committed without a 201', `${n(c.status503)} answered 503, ${n(c.otherStatus)} another status, ${n(c.noAnswer)} unanswered`],
        ['pushed deliveries', `${n(d.delivered)} of ${n(d.checked)} (post, follower) pairs in the follower's cached timeline (a sorted set: at most once)${d.trimmed > 0 ? `, ${n(d.trimmed)} more trimmed by newer posts` : ''}; ${n(d.rebuiltOnRead)} followers without a cached timeline (rebuilt from Postgres on read)`],
        ['pulled posts', `${n(d.pulledListed)} of ${n(d.pulledChecked)} in their author's cached list; ${n(d.pulledRebuiltOnRead)} lists not cached (rebuilt on read)${d.unchecked > 0 ? `; ${n(d.unchecked)} posts of run-time decisions (adaptive) not checked` : ''}`],
        ...(d.missing > 0 ? [['missing', `${n(d.missing)} ${rec.settled ? 'LOST' : 'pending: the fan-out had not settled'} (${rec.examples.missing.slice(0, 3).join('; ')})`] as [string, string]] : []),
      ],
    });
  }
  const f = x.fanout;
  const wf = f.workers.followerLag;
  const wp = f.workers.postLag;
  const pf = f.probes.followerLag;
  const pp = f.probes.postLag;
  sections.push({
    title: 'Replay: fan-out, each figure by two sources',
    rows: [
      ['how', `probes: every pulled and burst post and ${finite(f.probes.share) ? `${Math.round(100 * f.probes.share)}%` : 'a share'} of the others, up to nine active followers each (three the worker reaches last); a post appears between two polls: the midpoint is recorded (+-${f.probes.pollMs / 2} ms); workers: every delivery`],
      ['per follower, pushed', `workers p50 ${sec(wf.p50)}, p99 ${sec(wf.p99)}, max ${sec(wf.max)}; probes p50 ${sec(pf.p50)}, p99 ${sec(pf.p99)} (${n(f.probes.pairs)} followers of ${n(f.probes.posts)} posts, polled every ${f.probes.pollMs} ms): probe/workers ${ratio(f.agreement.followerP50)} at p50, ${ratio(f.agreement.followerP99)} at p99`],
      ['pulled posts', f.probes.pulledPosts > 0 ? `${n(f.probes.pulledPosts)} probed in their authors' lists, p50 ${sec(f.probes.pulledFollowerLag.p50)}, p99 ${sec(f.probes.pulledFollowerLag.p99)}, weighted by their ${n(f.probes.pulledFollowerLag.count)} live readers (in the summary's per-follower figure with the workers' pushed deliveries)` : 'none'],
      ['per post', `workers p50 ${sec(wp.p50)}, p99 ${sec(wp.p99)}; probes p50 ${sec(pp.p50)}, p99 ${sec(pp.p99)}: ${ratio(f.agreement.postP50)} at p50, ${ratio(f.agreement.postP99)} at p99`],
      // documents written before these figures have neither
      ...(f.hop ? [['where it goes', `commit to the event log p50 ${sec(f.hop.p50)}, p99 ${sec(f.hop.p99)} (${n(f.hop.count)} posts); a worker's event p50 ${sec(f.workers.event.p50)}, p99 ${sec(f.workers.event.p99)}; a batch of writes p50 ${sec(f.workers.batch.p50)}, p99 ${sec(f.workers.batch.p99)}`] as [string, string]] : []),
      ['not delivered', `${n(f.probes.notSeen)} probed followers never got their post${f.probes.missingTimelines > 0 ? `; ${n(f.probes.missingTimelines)} had no timeline (rebuilt on their next read)` : ''}${f.probes.skippedPosts > 0 ? `; ${n(f.probes.skippedPosts)} posts not probed (probe budget)` : ''}`],
      ['timeline writes', `${n(f.writes.counted)} counted at Redis per second by the workers' batches; the workers' own counter ${n(f.writes.workersCounter)}; ZADD calls at Redis ${n(f.writes.commandstatsZadd)} (lists and rebuilds too)`],
    ],
  });
  const mem = x.memory;
  const c = mem.classes;
  const cls = (label: string, k: typeof c.timelines, model: boolean) =>
    [label, `${n(k.keys)} keys, ${formatBytes(k.bytes)} by MEMORY USAGE${k.measured < k.keys ? ` (a sample of ${n(k.measured)}, scaled)` : ''}${k.entries > 0 ? `, ${n(k.entries)} entries` : ''}${model ? (finite(k.modelBytes) && k.modelBytes > 0 ? `; the simulator's model ${formatBytes(k.modelBytes)}: ${ratio(k.modelBytes / k.bytes)}` : '; the simulator\'s model: n/a') : '; not in the simulator\'s model'}`] as [string, string];
  sections.push({
    title: 'Replay: Redis memory at the end, by key class',
    rows: [
      cls('timelines', c.timelines, true),
      ['encodings', Object.entries(c.timelines.encodings ?? {}).map(([e, k]) => `${e} ${n(k)}`).join(', ') || 'none'],
      cls('pulled lists', c.pulledLists, true),
      cls('own lists', c.ownLists, false),
      cls('post bodies', c.bodies, false),
      cls('event log', c.eventLog, false),
      cls('the rest', c.other, false),
      ['instance', `used_memory ${formatBytes(mem.usedMemory)}, ${formatBytes(mem.usedMemory - mem.baselineUsedMemory)} over the start`],
    ],
  });
  const rd = x.reads;
  const cpr = rd.commandsPerRead;
  sections.push({
    title: 'Replay: reads',
    rows: [
      ['server\'s own histogram', `p50 ${ms(rd.server.p50Ms)}, p90 ${ms(rd.server.p90Ms)}, p99 ${ms(rd.server.p99Ms)} (${n(rd.server.answered)} answered; buckets interpolated)`],
      [
        'Redis commands per read',
        cpr
          ? `${cpr.total.toFixed(2)} over a ${cpr.seconds.toFixed(1)} s reads-only window of ${n(cpr.reads)} reads (${Object.entries(cpr.byCommand).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ')})`
          : 'not measured (the run was stopped)',
      ],
      ['server counters', `${n(rd.counters.coldStarts)} cold reads, ${n(rd.counters.rebuilds)} timeline and ${n(rd.counters.listRebuilds)} list rebuilds, ${n(rd.counters.fallbackReads)} Postgres fallbacks, ${n(rd.counters.followeeLoads)} followee sets loaded, body cache ${n(rd.counters.bodyMisses)} misses`],
      [
        'Postgres',
        `${n(x.postgres.transactions)} transactions (a statement outside one counts one), ${n(x.postgres.rowsRead)} rows read, ${n(x.postgres.rowsWritten)} written in database ${x.postgres.database}${x.postgres.own ? " (the replay's own)" : " (the deployment's: others' work in it counts too)"}`,
      ],
      ...x.cacheLosses.map((l): [string, string] => ['cache loss', `at ${fmtSeconds(l.atSeconds)}: ${n(l.keys)} keys removed (${n(l.timelines)} timelines)`]),
    ],
  });
  const faults = faultSection(x);
  if (faults) sections.push(faults);
  const sat = x.saturation;
  if (sat.own) {
    const line = (s: NonNullable<typeof sat.own>) => `${fmtRate(s.rate)} (${s.connections} connections, ${s.seconds.toFixed(0)} s, p50 ${ms(s.p50Ms)}, p99 ${ms(s.p99Ms)}, client ${n(s.clientCpuMicrosPerRequest)} us CPU a request${s.errors + s.non2xx > 0 ? `, ${s.errors + s.non2xx} errors` : ''})`;
    sections[0].rows.push(['closed-loop maximum', `feedlab ${line(sat.own)}${sat.autocannon ? `; autocannon ${line(sat.autocannon)}` : ''}`]);
  }
  const cpu = x.cpu;
  if (cpu.share) {
    const s = cpu.share;
    const parts = [...Object.entries(s.processes).map(([k, v]) => `${k} ${pct(v)}`), `redis ${pct(s.redis)}`, `postgres ${pct(s.postgres)}`, `driver ${pct(s.generator)}`, `other ${pct(s.other)}`, `idle ${pct(s.idle)}`];
    sections.push({
      title: 'Replay: where the CPU went (% of one core over the window)',
      rows: [
        ['processes', parts.join(', ')],
        ...coreWaitRow(s),
        ...residentRow(x),
        ...(cpu.contended ? ([['CONTENDED', `other processes took ${(cpu.otherShare * 100).toFixed(0)}% of the machine: the figures are disturbed`]] as [string, string][]) : []),
      ],
    });
  }
  return sections;
}

/** Each process's main thread's waits for a core over the window (absent from older documents). */
function coreWaitRow(s: CpuShare): [string, string][] {
  const waits = Object.entries(s.coreWaits ?? {}).filter(([, w]) => w.slices > 0);
  if (waits.length === 0) return [];
  const text = waits.map(([name, w]) => `${name} ${(waitPerSlice(w) * 1e6).toFixed(0)} us (${waitPerRun(w).toFixed(2)} of its CPU time)`).join(', ');
  return [['waits for a core', `each time put on a core, mean: ${text}`]];
}
