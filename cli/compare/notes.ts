// The "why" beside the time-dependent figures of `feedlab compare SCENARIO`: where the measured time
// went, from what the replay measured of its parts (the hop from a post's commit to the event log,
// a worker's handling of an event, the server's own histogram of its reads), next to the parts the
// model charges for the same (its calibrated hop, the worker's statements and first page, the API).
// Only measurements are quoted; a replay document written before these parts were measured gets no
// note.
import type { FigureId } from '../../sim/compare/figures.js';
import type { RunResult } from '../../sim/result.js';
import { LARGE_POST_TIMELINES } from '../../core/fanout-worker.js';
import { LOOP_PROBE_MS } from '../../core/runtime-metrics.js';
import { CALIBRATE } from '../calibrate/settings.js';
import { ADD_SCRIPT_COMMANDS } from '../../server/cache/post-list.js';
import { LATE_MS } from '../../sim/replay/driver.js';
import { secondsPerCall, secondsPerListWrite } from '../../sim/replay/redis-figures.js';
import { idlePickupOf } from '../../sim/replay/result.js';
import type { CommandTime } from '../../sim/scenario/calibration.js';
import { cpuSecondsOf, type CpuShare } from '../../sim/replay/cpu.js';
import { addWaits, NO_WAIT, waitPerRun, waitPerSlice, type CoreWait } from '../../sim/replay/core-wait.js';
import { slowdownAt } from '../../sim/model/machine.js';
import { constantValue, quantileAt, quantileMean } from '../../sim/scenario/quantiles.js';
import { idleCpuAt, STALL_FROM } from '../../sim/model/api-tier.js';
import type { IdlePoint, Scenario } from '../../sim/scenario/types.js';
import { mean } from 'simple-statistics';

const ms = (s: number) => (s < 1e-4 ? `${(s * 1e6).toFixed(2)} us` : `${(s * 1000).toFixed(s < 0.01 ? 2 : 1)} ms`);
const us = (s: number) => `${(s * 1e6).toFixed(1)} us`;
const msOf = (x: number) => `${x.toFixed(x < 10 ? 2 : 1)} ms`;

/**
 * What the model charges, as each calibration the simulated side ran with set it: one value where
 * they agree, else each one's in their order, "0.62 ms / 0.71 ms" (the replays' own are listed "a, b").
 */
type Each = (f: (sc: Scenario) => string) => string;
function eachOf(scs: readonly Scenario[]): Each {
  return (f) => {
    const xs = scs.map(f);
    return xs.every((x) => x === xs[0]) ? xs[0] : xs.join(' / ');
  };
}

/** A calibrated cost as each calibration set it (eachOf). */
const costOf = (each: Each) => (f: (c: Scenario['infrastructure']['costs']) => string) => each((sc) => f(sc.infrastructure.costs));

/**
 * Notes for one policy's figures, from its replay documents and the scenarios the model ran (the
 * mirrored one, sim/replay/mirror.ts, with each calibration of the simulated side, in order).
 */
export function figureNotes(measured: RunResult[], scs: readonly Scenario[]): Partial<Record<FigureId, string>> {
  if (scs.length === 0) throw new RangeError('figureNotes: no scenario the model ran');
  const notes: Partial<Record<FigureId, string>> = {};
  const each = eachOf(scs);
  const cost = costOf(each);
  const infra = (f: (i: Scenario['infrastructure']) => string) => each((sc) => f(sc.infrastructure));
  const parts = measured.map((r) => r.replay?.fanout).filter((f) => f?.hop !== undefined && f.workers.event !== undefined);
  if (parts.length > 0) {
    const hop = (k: 'p50' | 'p99') => mean(parts.map((f) => f!.hop[k]));
    const event = (k: 'p50' | 'p99') => mean(parts.map((f) => f!.workers.event[k]));
    const runs = parts.length === measured.length ? '' : ` (${parts.length} of the ${measured.length} runs measured these parts)`;
    const lag =
      `measured${runs}: commit to the event log p50 ${ms(hop('p50'))}, p99 ${ms(hop('p99'))}; a worker's event p50 ${ms(event('p50'))}, p99 ${ms(event('p99'))}. ` +
      `Modelled: postToLog p50 ${infra((i) => ms(quantileAt(i.postToLog, 0.5)))}, p99 ${infra((i) => ms(quantileAt(i.postToLog, 0.99)))}; the worker's statements p50 ${cost((c) => ms(quantileAt(c.eventStatements, 0.5)))} and first follower page ${cost((c) => `${ms(c.expand)} + ${ms(c.expandPerFollower)}`)} a follower before its writes at ${infra((i) => `${Math.round(i.writesPerSecondPerWorker)}/s`)}`;
    notes.lag_p50 = lag;
    notes.post_lag_p50 = lag;
    // the per-follower tail is the large posts' writes: their batches (none when every post is pulled)
    const batched = parts.filter((f) => f!.workers.batch.count > 0);
    if (batched.length > 0) {
      const batch = (k: 'p50' | 'p99') => mean(batched.map((f) => f!.workers.batch[k]));
      const full = (i: Scenario['infrastructure']) => i.costs.rtt + i.costs.batch + i.batchSize / i.writesPerSecondPerWorker;
      let tail =
        `the tail is the large posts' writes: measured${runs}, a worker's batch of timeline writes p50 ${ms(batch('p50'))}, p99 ${ms(batch('p99'))} ` +
        `(the largest batches are the full ones, ${infra((i) => String(i.batchSize))} timelines); modelled, a full batch ${infra((i) => ms(full(i)))} (${infra((i) => String(Math.round(i.writesPerSecondPerWorker)))} writes/s and ${cost((c) => ms(c.batch))} a batch beyond its round trip, ${infra((i) => String(i.worker.pipelines))} in flight)`;
      // where the tail's posts spend it: their writes per timeline, beside the line the model draws them from
      const large = measured.map((r) => r.summary.fanout.stagesSeconds?.largeWritesPerTimeline?.p50).filter((x): x is number => x !== undefined && Number.isFinite(x));
      if (large.length > 0) {
        tail += `; its posts of ${LARGE_POST_TIMELINES} timelines or more wrote them at p50 ${large.map(ms).join(', ')} a timeline measured, against the model's ${infra((i) => ms(1 / i.writesPerSecondPerWorker))} a follower and its batches' share (stage_large_writes_per_timeline_p50)`;
      }
      notes.lag_p99 = tail;
      notes.lag_max = tail;
      // a post's lag ends with its last follower's write: the largest posts' again
      notes.post_lag_p99 = tail;
      notes.post_lag_max = `one post: ${tail}`;
    }
  }
  pulledNotes(measured, each, notes);
  const apis = scs.map((sc) => sc.infrastructure.api).filter((a) => a !== null);
  if (apis.length === scs.length) notes.api_cpu = apiCpuNote(measured, each);
  Object.assign(notes, stageNotes(measured, scs));
  const server = measured.map((r) => r.replay?.reads.server).filter((s) => s !== undefined && Number.isFinite(s.p50Ms));
  if (server.length > 0) {
    const client = (k: 'p50' | 'p99') => mean(measured.map((r) => r.summary.reads.latencyMs[k]));
    const srv = (k: 'p50Ms' | 'p99Ms') => mean(server.map((s) => s![k]));
    const api = (f: (a: NonNullable<Scenario['infrastructure']['api']>) => string) => each((sc) => f(sc.infrastructure.api!));
    const read =
      `measured${server.length === measured.length ? '' : ` (${server.length} of the ${measured.length} runs)`}: the server's own histogram p50 ${msOf(srv('p50Ms'))}, p99 ${msOf(srv('p99Ms'))} of the client's ${msOf(client('p50'))}, ${msOf(client('p99'))} (the rest is the client and the network)` +
      (apis.length === scs.length
        ? `. Modelled: ${api((a) => ms(a.cpuPerRead))} of CPU a page + ${api((a) => ms(a.cpuPerList))} a list${apis.some((a) => a.cpuPerListEntry > 0) ? ` and ${api((a) => ms(a.cpuPerListEntry))} an entry it returns` : ''} + ${api((a) => ms(a.cpuPerPost))} a post, ${api((a) => ms(a.idleOverhead))} more on an idle API${apis.some((a) => idleCpuAt(a, 0) > 0) ? ` (${api((a) => ms(idleCpuAt(a, 0)))} of it CPU holding the core)` : ''}, two Redis round trips of ${cost((c) => ms(c.rtt))}, and the calibrated spread of a request one at a time, its stalls (beyond its p${Math.round(STALL_FROM * 100)}) met once more for every reference page's worth of CPU a page has beyond the first`
        : '');
    // a read that found its followee set missing or stale waited for Postgres: the model has no such wait
    const waits = measured.map((r) => r.replay?.reads.counters).filter((c) => c?.followeeLoadsWaited !== undefined);
    const waited = waits.length > 0 ? `; ${waits.map((c) => `${c!.followeeLoadsWaited} of ${c!.feedAnswered}`).join(', ')} reads waited for their followee set from Postgres (not modelled)` : '';
    notes.read_p50 = read + waited + clientWaits(measured, 'p50Ms');
    // the model's read tail is the calibrated spread's: its p99 over its p50 beside the server's own
    const tail = (p99: number, p50: number) => `${(p99 / p50).toFixed(2)}x`;
    const spreadTail =
      apis.length === scs.length
        ? `, where the calibrated spread of a read one at a time, which the model draws a read's service from, has its p99 ${api((a) => tail(quantileAt(a.spread, 0.99), quantileAt(a.spread, 0.5)))}`
        : '';
    const tails = `; the server's own p99 ${server.map((s) => tail(s!.p99Ms, s!.p50Ms)).join(', ')} its p50${spreadTail}`;
    notes.read_p99 = read + tails + waited + runtimeWaits(measured) + clientWaits(measured, 'p99Ms');
  }
  const waits = coreWaits(measured, scs);
  if (waits) for (const id of CROSSING_PROCESSES) if (notes[id]) notes[id] += waits;
  return notes;
}

/** The figures whose time crosses processes (a request or an event waking the next service), where waits for a core add up. */
const CROSSING_PROCESSES: FigureId[] = ['stage_statements_p50', 'stage_statements_p99', 'stage_first_page_p50', 'stage_writes_p50', 'stage_large_writes_per_timeline_p50', 'read_p50', 'read_p99'];

/**
 * How long the replays' processes waited for a core each time they woke (their main threads'
 * run-queue waits, sim/replay/core-wait.ts), beside what the model's shared cores charge at the
 * machine's measured load: an M/M/c station's wait over its service, C(c, rho) / (c (1 - rho)).
 * '' from documents that did not measure it.
 */
function coreWaits(measured: RunResult[], scs: readonly Scenario[]): string {
  // a share has its waits and its machine's cores together (both absent from older documents)
  const shares = measured.map((r) => r.replay?.cpu.share).filter((s): s is CpuShare & { coreWaits: Record<string, CoreWait>; cores: number } => s?.coreWaits !== undefined && s.cores !== undefined);
  if (shares.length === 0) return '';
  const group = (w: Record<string, CoreWait>, name: string) =>
    name === 'workers' ? Object.entries(w).filter(([k]) => k.startsWith('worker ')).reduce((sum, [, x]) => addWaits(sum, x), NO_WAIT) : w[name];
  const groups: [string, string][] = [['workers', 'the workers'], ['postgres', "Postgres's backends"], ['server', 'the server'], ['redis', 'Redis'], ['driver', 'the driver']];
  const parts = groups
    .map(([name, label]) => {
      const ws = shares.map((s) => group(s.coreWaits, name)).filter((w): w is CoreWait => w !== undefined && w.slices > 0);
      if (ws.length === 0) return null;
      return `${label} ${ws.map((w) => us(waitPerSlice(w))).join(', ')} (${ws.map((w) => waitPerRun(w).toFixed(2)).join(', ')})`;
    })
    .filter((p) => p !== null);
  if (parts.length === 0) return '';
  // the machine's load: what was not idle of its cores
  const load = shares.map((s) => ({ rho: Math.min(1, Math.max(0, 1 - s.idle / (100 * s.cores))), cores: s.cores }));
  // the machine's cores: the mirrored scenarios differ only in their calibrated costs
  const cores = scs[0].infrastructure.cores;
  const model =
    cores === null
      ? 'where the model has no shared cores (infrastructure.cores)'
      : `where the model's ${cores} shared cores add ${load.map((l) => (slowdownAt(cores, l.rho) - 1).toFixed(2)).join(', ')} of a stage's CPU time (an M/M/c station's wait)`;
  // the stages' inputs were measured with calibrate's own waits: the difference is the replays'
  const each = eachOf(scs);
  const calParts = groups.flatMap(([name, label]) => {
    const key = name === 'workers' ? 'worker' : name; // calibrate runs one worker
    const of = (sc: Scenario) => sc.calibration?.coreWaits?.[key];
    if (!scs.some(of)) return [];
    const w = (f: (w: NonNullable<ReturnType<typeof of>>) => string) => each((sc) => (of(sc) ? f(of(sc)!) : 'none'));
    return [`${name === 'workers' ? 'the worker' : label} ${w((x) => us(x.perSlice))} (${w((x) => x.ofCpu.toFixed(2))})`];
  });
  const calibrated = calParts.length > 0 ? `; while calibrate measured its running worker, ${calParts.join(', ')}` : '';
  return (
    `; on the machine's shared cores each process waited for a core as it woke: its mean wait each time it was put on one (and all its waits over its CPU time) ${parts.join(', ')}${calibrated}; ` +
    `the machine ${load.map((l) => `${(l.rho * 100).toFixed(0)}%`).join(', ')} busy on ${load.map((l) => l.cores).join(', ')} cores, ${model}`
  );
}

/**
 * A pulled post is delivered when its author's list holds it, before the 201: no hop, no worker. The
 * replays' probes took that time from the server's Server-Timing; the model draws api.postListed.
 * Added to the lag notes (in place of the pushed posts' tail where no post was pushed).
 */
function pulledNotes(measured: RunResult[], each: Each, notes: Partial<Record<FigureId, string>>): void {
  const probes = measured.map((r) => r.replay?.fanout.probes).filter((p) => p !== undefined && p.pulledPosts > 0 && p.pulledPostLag.count > 0);
  if (probes.length === 0) return;
  const timed = probes.map((p) => (p!.pulledTimed === undefined ? 'none' : `${p!.pulledTimed} of ${p!.pulledPosts}`)).join(', ');
  const modelled = each(({ infrastructure: i }) =>
    i.api
      ? `api.postListed p50 ${ms(quantileAt(i.api.postListed, 0.5))}, p99 ${ms(quantileAt(i.api.postListed, 0.99))} (the post's CPU ${ms(i.api.cpuPerWrite)} at least)`
      : `without an API tier: a Redis round trip, ${ms(i.costs.rtt)}`,
  );
  const modelledText = `; modelled, ${modelled}`;
  // per follower, each post weighted by its audience; per post, once each
  const text = (per: 'pulledFollowerLag' | 'pulledPostLag') => {
    const lag = (k: 'p50' | 'p99') => mean(probes.map((p) => p![per][k]));
    return (
      `pulled posts (delivered when their author's list holds them, before the 201; the server's Server-Timing for ${timed}, the others bounded by the 201): ` +
      `measured${per === 'pulledFollowerLag' ? ' per follower' : ''}, creation to the list p50 ${ms(lag('p50'))}, p99 ${ms(lag('p99'))}${modelledText}`
    );
  };
  const follower = text('pulledFollowerLag');
  const post = text('pulledPostLag');
  const add = (id: FigureId, t: string) => (notes[id] = notes[id] ? `${notes[id]}. ${t[0].toUpperCase()}${t.slice(1)}` : t);
  add('lag_p50', follower);
  add('post_lag_p50', post);
  for (const id of ['lag_p99', 'lag_max'] as const) notes[id] ??= follower;
  for (const id of ['post_lag_p99', 'post_lag_max'] as const) notes[id] ??= post;
}

/**
 * The API's CPU: what the replays' server process burned a request (where a document has its CPU
 * and its requests), against what the model charges: a request's (the closed loops' fits, the idle
 * CPU at a trickle) and a process's background.
 */
function apiCpuNote(measured: RunResult[], each: Each): string {
  const api = (f: (a: NonNullable<Scenario['infrastructure']['api']>) => string) => each((sc) => f(sc.infrastructure.api!));
  const per = measured
    .map((r) => {
      const share = r.replay?.cpu.share;
      const requests = r.replay?.driver.totals;
      if (!share || !requests) return null;
      const answered = requests.reads.sent + requests.posts.sent;
      return answered > 0 ? cpuSecondsOf(share, share.server) / answered : null;
    })
    .filter((x) => x !== null);
  const measuredText = per.length > 0 ? `measured, the server process's CPU over the window ${per.map((x) => ms(x)).join(', ')} a request sent (its relay, timers and scrapes included)` : 'measured from /proc';
  return `${measuredText}; modelled, a page's CPU from the closed loops' fits (${api((a) => ms(a.cpuPerRead))} + its lists and posts), a post's ${api((a) => ms(a.cpuPerWrite))}, ${api((a) => ms(idleCpuAt(a, 0)))} more CPU for a request that finds the tier idle (none at full load), and ${api((a) => String(a.backgroundCpu))} cores a process keeps busy with no request`;
}

/** The server's event-loop waits and GC pauses the replays measured (server/http/runtime-metrics.ts), '' from older servers. */
function runtimeWaits(measured: RunResult[]): string {
  const servers = measured.map((r) => r.replay?.reads.server);
  const loops = servers.map((s) => s?.loopDelay).filter((l) => l !== undefined);
  const gcs = servers.map((s) => s?.gc).filter((g) => g !== undefined);
  let out = '';
  if (loops.length > 0) out += `; the server's event loop ran a timer due every ${LOOP_PROBE_MS} ms late by p50 ${loops.map((l) => msOf(l.p50Ms)).join(', ')}, p99 ${loops.map((l) => msOf(l.p99Ms)).join(', ')} (a read arriving then waited as long)`;
  if (gcs.length > 0) out += `; its GC paused it ${gcs.map((g) => `${g.pauses} times for ${msOf(g.totalMs)}`).join(', ')}, p99 ${gcs.map((g) => msOf(g.p99Ms)).join(', ')}`;
  return out;
}

/**
 * The client's share of a read: a read is timed from when it was due (open model), so a send the
 * load generator made late counts in it; on one machine the generator shares the cores with the
 * stack. The same quantile from the actual send, the late sends, and a session's first page (sent
 * after an idle gap) beside its later ones (sent as the page before is answered). '' from older
 * documents.
 */
function clientWaits(measured: RunResult[], k: 'p50Ms' | 'p99Ms'): string {
  const drivers = measured.map((r) => r.replay?.driver).filter((d) => d?.latency?.sendDelay !== undefined);
  if (drivers.length === 0) return '';
  const list = (f: (d: NonNullable<(typeof drivers)[number]>) => string) => drivers.map((d) => f(d!)).join(', ');
  const late = list((d) => `${d.totals.reads.lateGenerator} of ${d.totals.reads.sent}`);
  return (
    `; from the actual send, ${k === 'p50Ms' ? 'p50' : 'p99'} ${list((d) => msOf(d.latency.reads.fromSent[k]))}: the load generator sent ${late} reads over ${LATE_MS} ms late ` +
    `(the send delay of all its requests p99 ${list((d) => msOf(d.latency.sendDelay.p99Ms))}, max ${list((d) => msOf(d.latency.sendDelay.maxMs))}; ` +
    `its own event loop late by p99 ${list((d) => msOf(d.driver.loopDelayP99Ms))}, an answer arriving then read as late, at ${list((d) => (Number.isFinite(d.driver.cpuMicrosPerRequest) ? `${Math.round(d.driver.cpuMicrosPerRequest)} us` : 'no request'))} of its CPU a request); ` +
    `first pages ${list((d) => msOf(d.latency.firstPages.fromIntended[k]))}, later pages ${list((d) => msOf(d.latency.laterPages.fromIntended[k]))}`
  );
}

/** The workers' event-loop waits the replays measured, '' from older workers. */
function workerLoops(measured: RunResult[]): string {
  const loops = measured.map((r) => r.replay?.fanout.workers.loopDelay).filter((l) => l !== undefined && l.count > 0);
  if (loops.length === 0) return '';
  return `; the workers' event loops ran a timer due every ${LOOP_PROBE_MS} ms late by p50 ${loops.map((l) => ms(l!.p50)).join(', ')}, p99 ${loops.map((l) => ms(l!.p99)).join(', ')}`;
}

/**
 * Redis's own time per timeline write, calibrated against the replays' (their EVALSHAs over the
 * window per list trimmed), with calibrate's running worker's between where its file kept them:
 * '' from older documents.
 */
function redisPerWrite(measured: RunResult[], scs: readonly Scenario[], zadd: string): string {
  // (an older document has no redisSecondsPerWrite; its commandstats give it)
  const perWrite = (r: RunResult) => r.replay?.fanout.writes.redisSecondsPerWrite ?? secondsPerListWrite(r.replay?.fanout.redisCommands?.evalsha, r.replay?.fanout.redisCommands?.zremrangebyrank);
  const per = measured.map(perWrite).filter((x): x is number => typeof x === 'number');
  if (per.length === 0) return '';
  // each calibration's, in their order as costs.zadd's are ('none' from a file without them)
  const worker = (sc: Scenario) => {
    const stats = sc.calibration?.workerRedisCommands;
    const perWrite = stats ? secondsPerListWrite(stats.evalsha, stats.zremrangebyrank) : null;
    if (!stats || perWrite === null) return null;
    const split = scriptCommands(stats);
    return `${us(perWrite)}${split ? ` (of it, the script's ${ADD_SCRIPT_COMMANDS.length} commands for a timeline ${split}, the rest Lua's own)` : ''}`;
  };
  const running = scs.some((sc) => worker(sc) !== null) ? `, ${eachOf(scs)((sc) => worker(sc) ?? 'none')} a write over calibrate's running worker's posts by size` : '';
  const runs = measured.flatMap((r) => {
    const stats = r.replay?.fanout.redisCommands;
    const split = stats ? scriptCommands(stats) : null;
    return split ? [split] : [];
  });
  const replays = runs.length > 0 ? `; of it, the script's ${ADD_SCRIPT_COMMANDS.length} commands for a timeline, every caller's over the window: ${runs.join('; ')}, the rest Lua's own` : '';
  return `; Redis's own time a timeline write ${zadd} as calibrated (costs.zadd)${running}, the replays' ${per.map(us).join(', ')} (their scripts' commandstats over the window)${replays}`;
}

/**
 * Where a script's time went, from commandstats over a window: each command the timeline write's
 * script calls, its time a call (every caller's: a replay's probes' EXISTS and reads' PEXPIRE too),
 * added up, "9.2 us (ZADD 5.3 us, ...)"; the rest of the script's time is Lua's own. Null where the
 * window lacks one of them.
 */
function scriptCommands(stats: Record<string, CommandTime>): string | null {
  const commands = ADD_SCRIPT_COMMANDS.map((cmd) => ({ cmd, perCall: stats[cmd] ? secondsPerCall(stats[cmd]) : NaN }));
  if (commands.some((c) => !Number.isFinite(c.perCall))) return null;
  const sum = commands.reduce((s, c) => s + c.perCall, 0);
  return `${us(sum)} (${commands.sort((a, b) => b.perCall - a.perCall).map((c) => `${c.cmd.toUpperCase()} ${us(c.perCall)}`).join(', ')})`;
}

/**
 * The stages the model takes straight from the calibration (the hop, the pickup, the statements) or
 * from its lines (the first page, the writes): the calibrated input beside each replay's own figure,
 * so that a gap between the two measurements of the machine (calibrate's, then the replays') reads
 * apart from the model's arithmetic.
 */
function stageNotes(measured: RunResult[], scs: readonly Scenario[]): Partial<Record<FigureId, string>> {
  const stages = measured.map((r) => r.summary.fanout.stagesSeconds).filter((s) => s !== undefined);
  if (stages.length === 0) return {};
  const each = eachOf(scs);
  const cost = costOf(each);
  /** A clause each calibration sets (", moved by ..."): one where they agree, else each one's after its number. */
  const clause = (f: (c: Scenario['infrastructure']['costs']) => string) => {
    const xs = scs.map((sc) => f(sc.infrastructure.costs));
    return new Set(xs).size === 1 ? xs[0] : xs.map((x, i) => `; calibration ${i + 1}${x || ', none'}`).join('');
  };
  const files = scs.map((sc) => sc.calibration).filter((c) => c !== undefined);
  const from = files.length > 0 ? `calibrated (${files.map((c) => `${c.file}, ${c.date}`).join('; ')})` : "the scenario's";
  type Stage = 'postToLog' | 'pickup' | 'statements' | 'firstPage' | 'writes';
  // a replay without the stage (an older one, or one with no large post) says so
  const runs = (of: Stage | 'largeWritesPerTimeline', k: 'p50' | 'p99' | 'mean') =>
    `the replays' ${stages.map((s) => { const x = s![of]?.[k]; return x !== undefined && Number.isFinite(x) ? ms(x) : 'none'; }).join(', ')}`;
  // where the model passes the calibrated figure straight through, a ratio outside 15% is this
  // machine measuring the same stage differently in calibrate and in the replays: said in one figure
  // (against the calibrations' mean input)
  const against = (of: Stage, k: 'p50' | 'p99' | 'mean', input: (sc: Scenario) => number) => {
    const x = mean(stages.map((s) => s![of][k])) / mean(scs.map(input));
    return Number.isFinite(x) && x > 0 ? `, ${x.toFixed(2)}x the input, which the model draws from unchanged` : '';
  };
  // the log's entry ids and the worker's clock are whole milliseconds
  const ticks = ' (millisecond clocks: a quantile is a whole number of ms)';
  const hop = (k: 'p50' | 'p99', p: number) => {
    const input = (sc: Scenario) => quantileAt(sc.infrastructure.postToLog, p);
    return `${from} postToLog ${k} ${each((sc) => ms(input(sc)))}, drawn per post; ${runs('postToLog', k)}${against('postToLog', k, input)}${ticks}`;
  };
  // each stage is moved by the consumer's idle time before the event on its own curve
  // (sim/model/idle-wake.ts); the replay's world is simulated with the reference worker
  // (sim/replay/mirror.ts), which it moves
  const movedBy = (c: Scenario['infrastructure']['costs'], curve: IdlePoint[] | null, how: string) =>
    curve && curve.length > 0 ? `, ${how} by the worker's idle time before it (measured at ${ms(c.eventStatementsGap)}; median ${curve.map((p) => `${ms(p.value)} after ${ms(p.gap)}`).join(', ')})` : '';
  const idle = clause((c) => movedBy(c, c.eventStatementsByIdle, 'moved'));
  const pageIdle = clause((c) => movedBy(c, c.eventFirstPageByIdle, 'moved'));
  const writesIdle = clause((c) => movedBy(c, c.eventWritesByIdle, "plus once the move of a small post's writes"));
  // a post's per-follower writes scaled by a draw of the calibrated spread about the line
  const spread = clause((c) => {
    const at = (p: number) => quantileAt(c.eventWritesSpread, p);
    const every = constantValue(c.eventWritesSpread);
    if (every === null) return `, each post's per-follower part scaled by a draw of eventWritesSpread (p50 ${at(0.5).toFixed(2)}x, p90 ${at(0.9).toFixed(2)}x, max ${at(1).toFixed(2)}x)`;
    return every === 1 ? '' : `, every post at ${every}x it`;
  });
  const statements = (k: 'p50' | 'p99', p: number) => {
    const input = (sc: Scenario) => quantileAt(sc.infrastructure.costs.eventStatements, p);
    return `${from} eventStatements ${k} ${each((sc) => ms(input(sc)))}, drawn per event${idle}; ${runs('statements', k)}${idle ? '' : against('statements', k, input)}`;
  };
  // every post pulled in every replay (pull): no first page or writes measured to set beside the line
  const pushed = stages.some((s) => s!.firstPage.max > 0 || s!.writes.max > 0);
  // drawn per event from the calibrated table (one duration in an uncalibrated scenario)
  const pickup = (p: number | 'mean') => cost((c) => ms(p === 'mean' ? quantileMean(c.pickup) : quantileAt(c.pickup, p)));
  // the writes line's parts, and Redis's own time a script beside them
  const perBatch = cost((c) => ms(c.rtt + c.batch));
  const batchSize = each((sc) => String(sc.infrastructure.batchSize));
  const perFollower = each((sc) => ms(1 / sc.infrastructure.writesPerSecondPerWorker));
  const redis = redisPerWrite(measured, scs, cost((c) => us(c.zadd)));
  const pushedStages = pushed
    ? {
        stage_first_page_p50: `${from} ${cost((c) => `${ms(c.expand)} + ${ms(c.expandPerFollower)}`)} a follower (at least a round trip)${pageIdle}; ${runs('firstPage', 'p50')}`,
        stage_writes_p50: `${from} ${perBatch} a batch (up to ${batchSize} followers, ${each((sc) => String(sc.infrastructure.worker.pipelines))} in flight) + ${perFollower} a follower, behind the consumer's other writes${writesIdle}${spread}; ${runs('writes', 'p50')}`,
        stage_writes_p99: `the same line for the largest posts${spread}; ${runs('writes', 'p99')}${redis}`,
        stage_large_writes_per_timeline_p50: `the same line over a large post's timelines: ${perFollower} a follower (${from}${files.length > 0 ? `: a running worker's posts of ${CALIBRATE.workerBySize.followers.join(', ')} followers, one at a time` : ''}) and ${perBatch} a batch of up to ${batchSize}${spread}; ${runs('largeWritesPerTimeline', 'p50')}${redis}`,
      }
    : {};
  // the replays' own pickup of an idle worker, as calibrate's is, each replay's in order ("none" where
  // it kept none; nothing said when no replay did)
  const idleRuns = measured.map(idlePickupOf);
  const idlePickup = idleRuns.some((x) => x !== null) ? `; of the events that found their worker waiting, ${idleRuns.map((x) => (x ? `${ms(x.mean)} (${x.count.toLocaleString('en-US')} events)` : 'none')).join(', ')}` : '';
  return {
    stage_post_to_log_p50: hop('p50', 0.5),
    stage_post_to_log_p99: hop('p99', 0.99),
    stage_pickup_mean: `${from} pickup ${pickup('mean')} (its draws' mean) to an idle worker, plus any wait behind its batch; ${runs('pickup', 'mean')}${idlePickup}`,
    stage_pickup_p99: `${from} pickup p99 ${pickup(0.99)} to an idle worker, drawn per event, plus a busy one's wait behind its batch: the model's worker has no event loop held by other work beyond what calibrate's met; ${runs('pickup', 'p99')}${ticks}${workerLoops(measured)}`,
    stage_statements_p50: statements('p50', 0.5),
    stage_statements_p99: statements('p99', 0.99),
    ...pushedStages,
  };
}
