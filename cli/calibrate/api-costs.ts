// The API tier, measured on the running `feedlab serve` process: its CPU (utime + stime from
// /proc/PID/stat, sim/replay/cpu.ts) over closed loops of GET /v1/feed by readers of one shape at a
// time (the pulled followees a page merges; the page size by ?limit=), fitted against the merged
// lists and against the hydrated posts; its CPU per POST /v1/posts; the HTTP round trip of a
// trivial request (GET /healthz) less its CPU; and the spread of a read's service time, one request
// at a time.
//
// The service time of a read: its latency as this client measures it (from writing the request to
// the last byte of the answer, one request in flight on one keep-alive connection, nothing else
// sent, an idle gap before each as a replay's reads have) less api.network, the trivial request's median round trip less the server's CPU for it (0 when not above it).
// What is left is everything the server does for the read: its CPU, its Redis round trips and
// Redis's work, and its waits. Subtracting a constant keeps the order, so each quantile of the
// service time is that quantile of the latency less the network; the spread is each over the mean.
import * as hdr from 'hdr-histogram-js';
import { firstSlice } from '../../core/read-plan.js';
import { CpuMeter, cpuSecondsOf, processCpuSeconds } from '../../sim/replay/cpu.js';
import { closedLoop, getRequest, newHistogram, openConnections, postRequest, request, type ClosedLoopResult, type KeepAliveConnection } from '../../sim/replay/http-client.js';
import { Rng } from '../../core/random.js';
import { sleep } from './pace.js';
import { fitLine, SampleSet, spreadOf, type Spread } from '../../sim/calibration/figures.js';
import { QUANTILES, unsoundFit, type ApiMeasurements } from '../../sim/calibration/document.js';
import { CalibrationStopped, inRounds, moreRoundsWhile, type Rounds } from './rounds.js';
import { CALIBRATE } from './settings.js';

export interface ApiTarget {
  host: string;
  port: number;
  serverPid: number;
  token: (user: number) => string;
  readersByPulled: ReadonlyMap<number, readonly number[]>;
  /** Readers by the number of quiet (empty-listed) pulled followees. */
  readersByQuiet: ReadonlyMap<number, readonly number[]>;
  /** Who posts in the write loop. */
  authors: readonly number[];
  /** Seeds the idle gaps between paced reads. */
  seed: number;
}

/** The server's CPU seconds per request answered in a loop. */
function cpuPerRequest(r: ClosedLoopResult, what: string): number {
  if (r.errors > 0) throw new Error(`calibrate: ${r.errors} of the ${what} failed (${r.firstError})`);
  if (r.completed === 0) throw new Error(`calibrate: no ${what} answered within the sample`);
  return cpuSecondsOf(r.cpu, r.cpu.server) / r.completed;
}

/** Requests of one shape (`quiet`: the pulled followees are quiet ones), the readers in turn. */
function readsOf(t: ApiTarget, pulled: number, limit: number, quiet = false): () => Buffer {
  const host = `${t.host}:${t.port}`;
  const readers = (quiet && pulled > 0 ? t.readersByQuiet : t.readersByPulled).get(pulled);
  if (!readers || readers.length === 0) throw new Error(`calibrate: no readers with ${pulled} ${quiet ? 'quiet ' : ''}pulled followees`);
  const bytes = readers.map((r) => getRequest(host, `/v1/feed?limit=${limit}`, t.token(r)));
  let i = 0;
  return () => bytes[i++ % bytes.length];
}

/** Reads by shape (CPU fits), the trivial request and the service-time spread; writes are measureWrites. */
export async function measureApi(t: ApiTarget, rounds: Rounds): Promise<Omit<ApiMeasurements, 'write'>> {
  const conns = await openConnections(t.host, t.port, CALIBRATE.api.connections);
  const one = [conns[0]];
  const meter = new CpuMeter(null, t.serverPid, 0, null);
  try {
    const cpu = await cpuFits(t, conns, meter, rounds);
    const network = await trivialRequests(t, one, meter, rounds);
    const service = await serviceTimes(t, one, rounds, Math.max(0, network.roundTrip.median - network.cpu.median), t.seed, t.serverPid);
    return { ...cpu, trivialRoundTrip: network.roundTrip, trivialCpu: network.cpu, service };
  } finally {
    for (const c of conns) c.close();
  }
}

/**
 * CPU per read against the merged lists (the pulled shapes at one page size: full lists; the quiet
 * shapes: empty ones) and the posts (the page sizes at one shape).
 */
async function cpuFits(t: ApiTarget, conns: KeepAliveConnection[], meter: CpuMeter, rounds: Rounds): Promise<Pick<ApiMeasurements, 'lists' | 'quietLists' | 'posts' | 'at' | 'fullListEntries'>> {
  const a = CALIBRATE.api;
  const shapes = new Map<string, { pulled: number; limit: number; quiet: boolean }>();
  for (const pulled of CALIBRATE.world.pulledShapes) shapes.set(`${pulled}/${a.pageSizeAt}`, { pulled, limit: a.pageSizeAt, quiet: false });
  for (const limit of a.pageSizes) shapes.set(`${a.pulledAt}/${limit}`, { pulled: a.pulledAt, limit, quiet: false });
  for (const pulled of CALIBRATE.world.quietShapes) shapes.set(`quiet ${pulled}/${a.pageSizeAt}`, { pulled, limit: a.pageSizeAt, quiet: true });
  const picks = new Map([...shapes].map(([k, s]) => [k, readsOf(t, s.pulled, s.limit, s.quiet)]));
  const lists = new SampleSet();
  const quietLists = new SampleSet();
  const posts = new SampleSet();
  const round = async (keep: boolean, only?: (s: { pulled: number; limit: number; quiet: boolean }) => boolean) => {
    for (const [key, s] of shapes) {
      if (only && !only(s)) continue;
      const pick = picks.get(key)!;
      const r = await closedLoop(conns, () => pick(), a.settleMs, a.sampleMs, meter);
      const cpu = cpuPerRequest(r, 'feed reads');
      if (!keep) continue;
      // a page merges the timeline, the reader's own list and each pulled author's list; the shape
      // without pulled followees is the start of both lines
      if (s.quiet) quietLists.add(s.pulled + 2, cpu);
      else {
        if (s.limit === a.pageSizeAt) lists.add(s.pulled + 2, cpu);
        if (s.limit === a.pageSizeAt && s.pulled === 0) quietLists.add(2, cpu);
        if (s.pulled === a.pulledAt) posts.add(s.limit, cpu);
      }
    }
  };
  await inRounds(rounds, (keep) => round(keep));
  // a line the samples scatter off is measured again (its shapes only) before it is refused
  const scattered = () => {
    const why = [unsoundFit('API CPU against merged lists', fitLine(lists.byKey), 'list'), unsoundFit('API CPU against hydrated posts', fitLine(posts.byKey), 'post')].filter((w) => w !== null);
    return why.length > 0 ? why.join('; ') : null;
  };
  await moreRoundsWhile(rounds, a.retrySets, scattered, () => round(true, (s) => !s.quiet));
  return {
    lists: fitLine(lists.byKey),
    quietLists: fitLine(quietLists.byKey),
    posts: fitLine(posts.byKey),
    at: { lists: a.pulledAt + 2, posts: a.pageSizeAt },
    // the celebrities' lists hold more than a page: each read returns the first slice
    fullListEntries: firstSlice(a.pageSizeAt),
  };
}

/** GET /healthz one at a time: each sample's median round trip, and the server's CPU per request. */
async function trivialRequests(t: ApiTarget, one: KeepAliveConnection[], meter: CpuMeter, rounds: Rounds) {
  const bytes = Buffer.from(`GET /healthz HTTP/1.1\r\nHost: ${t.host}:${t.port}\r\n\r\n`, 'latin1');
  const trips: number[] = [];
  const cpus: number[] = [];
  await inRounds(rounds, async (keep) => {
    const r = await closedLoop(one, () => bytes, 50, CALIBRATE.network.sampleMs, meter);
    const cpu = cpuPerRequest(r, 'health checks');
    if (!keep) return;
    trips.push(r.latency.getValueAtPercentile(50) / 1e6);
    cpus.push(cpu);
  });
  return { roundTrip: spreadOf(trips), cpu: spreadOf(cpus) };
}

/**
 * Reads of the shared shape one at a time, an idle gap between them (CALIBRATE.pace): the latency
 * histogram over every sample, less the network (see the header); and the server's CPU per read at
 * that pace (each sample's CPU over its reads, less what the server burns with no request at all
 * over as long: its timers, the relay's polls): what a paced read costs the server's core, which
 * the closed loops' fits do not see.
 */
async function serviceTimes(t: ApiTarget, one: KeepAliveConnection[], rounds: Rounds, network: number, seed: number, pid: number): Promise<ApiMeasurements['service']> {
  const a = CALIBRATE.api;
  const pick = readsOf(t, a.pulledAt, a.pageSizeAt);
  const all: hdr.Histogram = newHistogram();
  const gaps = new Rng(seed);
  const paced: { cpu: number; seconds: number }[] = [];
  await inRounds(rounds, async (keep) => {
    const cpu0 = processCpuSeconds(pid);
    const wall0 = performance.now();
    for (let i = 0; i < CALIBRATE.spread.readsPerSample; i++) {
      await sleep(gaps.exponential(1 / CALIBRATE.pace.meanGapMs));
      const t0 = performance.now();
      const r = await request(one[0], pick());
      const us = (performance.now() - t0) * 1000;
      if (r.status !== 200) throw new Error(`calibrate: a feed read answered ${r.status}`);
      if (keep) all.recordValue(Math.round(us));
    }
    if (keep) paced.push({ cpu: processCpuSeconds(pid) - cpu0, seconds: (performance.now() - wall0) / 1000 });
  });
  // then the server alone, as many seconds as samples (after the reads: none of them is the first
  // after a long idle spell)
  const idle: number[] = [];
  let quietCpu = 0;
  let quietSeconds = 0;
  for (let i = 0; i < paced.length; i++) {
    if (rounds.signal?.aborted) throw new CalibrationStopped('calibrate stopped');
    const cpu0 = processCpuSeconds(pid);
    const wall0 = performance.now();
    await sleep(CALIBRATE.spread.quietMs);
    const cpu = processCpuSeconds(pid) - cpu0;
    const seconds = (performance.now() - wall0) / 1000;
    idle.push(cpu / seconds);
    quietCpu += cpu;
    quietSeconds += seconds;
  }
  // pooled, not their median: the server's 5 s sampler lands in one second of five
  const idleCpuRate = quietSeconds > 0 ? quietCpu / quietSeconds : NaN;
  const cpus = paced.map((r) => (r.cpu - idleCpuRate * r.seconds) / CALIBRATE.spread.readsPerSample);
  const points = QUANTILES.map((p) => ({ p, value: all.getValueAtPercentile(p * 100) / 1e6 - network }));
  return { points, n: all.totalCount, mean: all.mean / 1e6 - network, cpu: spreadOf(cpus), idleCpuPerSecond: spreadOf(idle), idleCpuRate };
}

/** POST /v1/posts in a closed loop: the server's CPU per post (the outbox relay's share included). */
export async function measureWrites(t: ApiTarget, rounds: Rounds): Promise<Spread> {
  const conns = await openConnections(t.host, t.port, CALIBRATE.writes.connections);
  try {
    return await writes(t, conns, new CpuMeter(null, t.serverPid, 0, null), rounds);
  } finally {
    for (const c of conns) c.close();
  }
}

async function writes(t: ApiTarget, conns: KeepAliveConnection[], meter: CpuMeter, rounds: Rounds): Promise<Spread> {
  const host = `${t.host}:${t.port}`;
  const bytes = t.authors.map((u) => postRequest(host, '/v1/posts', t.token(u), { text: 'measuring what a post costs the API' }));
  let i = 0;
  const cpus: number[] = [];
  const w = CALIBRATE.writes;
  await inRounds(rounds, async (keep) => {
    const r = await closedLoop(conns, () => bytes[i++ % bytes.length], w.settleMs, w.sampleMs, meter, 201);
    const cpu = cpuPerRequest(r, 'posts');
    if (keep) cpus.push(cpu);
  });
  return spreadOf(cpus);
}
