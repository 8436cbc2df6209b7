// The plan math for one point: every resource with the numbers behind it and its reason, one
// function per resource. `evaluatePoint` runs them all; samples, what-ifs and the binding
// constraint all re-run it with something changed.
import { listsPerPage } from '../../core/read-plan.js';
import { fullListsCpuSeconds } from '../model/list-reads.js';
import { idleCpuAt, instancesFor, requestCoresPerProcess } from '../model/api-tier.js';
import { parseScenario } from '../scenario/load.js';
import type { FanoutPolicy } from '../../core/fanout-policy.js';
import { formatBytes, formatCount, formatDuration } from '../scenario/units.js';
import type { PlanSettings, Scenario } from '../scenario/types.js';
import { lagEstimate, lagModel, workersForLag, workersForThroughput } from './fanout.js';
import type { PlanPoint } from './inputs.js';
import { coldStartAt, loadAt, memoryAt, type Load, type Memory } from './load.js';
import { readP99, redisWork, shardImbalance, shardsForMemory, shardsForReads, shardUtilisation, type RedisWork } from './redis.js';
import { littlesLaw, squareRootStaffing } from './staffing.js';
import type { Workload } from './workload.js';


/** The API tier's scenario defaults, for a plan of a scenario that leaves it out (api: none). */
const API_DEFAULTS = parseScenario('name: api-defaults\n', 'api-defaults').infrastructure.api!;
export interface PlanContext {
  scenario: Scenario;
  policy: FanoutPolicy;
  settings: PlanSettings;
  growth: number;
  headroom: number;
}

export const RESOURCE_IDS = ['fanoutWorkers', 'redisMemory', 'redisShards', 'redisNodes', 'partitions', 'apiInstances', 'postgresConnections'] as const;
export type ResourceId = (typeof RESOURCE_IDS)[number];

export const RESOURCES: Record<ResourceId, { label: string; unit: 'count' | 'bytes' }> = {
  fanoutWorkers: { label: 'fan-out workers', unit: 'count' },
  redisMemory: { label: 'Redis memory, all nodes', unit: 'bytes' },
  redisShards: { label: 'Redis shards (primaries)', unit: 'count' },
  redisNodes: { label: 'Redis nodes with replicas', unit: 'count' },
  partitions: { label: 'event-log partitions', unit: 'count' },
  apiInstances: { label: 'API instances', unit: 'count' },
  postgresConnections: { label: 'Postgres connections for rebuilds', unit: 'count' },
};

export interface FanoutFigures {
  throughput: number;
  lag: number;
  workers: number;
  /** What the closed form alone asks for (workers may be fixed from outside, e.g. by the simulation check). */
  closedForm: number;
  /** Closed-form p99 follower lag with `workers`. */
  lagSeconds: number;
}

export interface RedisFigures {
  usedBytes: number;
  provisionedBytes: number;
  imbalance: number;
  memoryShards: number;
  readShards: number;
  shards: number;
  nodes: number;
  /** Utilisation of the busiest shard and the read p99 with the planned shards (closed form). */
  utilisation: number;
  readP99Seconds: number;
  /** Highest busiest-shard utilisation at which the read p99 meets its objective. */
  sloUtilisation: number;
  work: RedisWork;
}

export interface Figures {
  point: PlanPoint;
  load: Load;
  memory: Memory;
  fanout: FanoutFigures;
  redis: RedisFigures;
  partitions: { expansion: number; consumers: number; value: number };
  api: { offeredCores: number; staffedCores: number; instances: number; inFlight: number };
  postgres: { rebuildsPerSecond: number; rowsPerSecond: number; offered: number; connections: number };
}

const spare = (h: number) => 1 - h;

export function fanoutWorkers(load: Load, ctx: PlanContext, fixedWorkers?: number): FanoutFigures {
  const m = lagModel(ctx.scenario);
  const throughput = workersForThroughput(load, m.perWorker, ctx.headroom);
  const lag = workersForLag(load, m, ctx.scenario.slo.fanoutLagP99);
  // a large-post pool is carved out of the fleet: keep at least one ordinary worker beside it
  const floor = (ctx.scenario.infrastructure.largePostClass?.workers ?? 0) + 1;
  const closedForm = Math.max(throughput, Number.isFinite(lag) ? lag : throughput, floor);
  const workers = fixedWorkers ?? closedForm;
  return { throughput, lag, workers, closedForm, lagSeconds: lagEstimate(workers, load, m) };
}

/**
 * The Redis fleet for a load. The shards are the larger of what memory and what reads need; with a
 * cache loss in the scenario the reads need depends on the shards (more shards, a smaller share lost,
 * fewer rebuilds), so the count is the fewest shards s >= the memory's with reads(s) <= s. Returns
 * the load with its cold starts at the shards found.
 */
export function redisFleet(load0: Load, mem: Memory, ctx: PlanContext, fixedShards?: number): { redis: RedisFigures; load: Load } {
  const s = ctx.settings;
  const sc = ctx.scenario;
  const readsAt = (shards: number) => {
    const load = coldStartAt(load0, shards);
    const work = redisWork(load, sc.infrastructure.costs, sc.activity.pageSize);
    return { load, work, reads: shardsForReads(work, sc.slo.readP99, ctx.headroom) };
  };
  const memShards = shardsForMemory(mem, s.redisNodeMemory, s.fragmentation, ctx.headroom, sc.infrastructure.redisShards);
  let shards = fixedShards ?? memShards.shards;
  if (fixedShards === undefined) {
    const first = readsAt(shards).reads.shards;
    if (Number.isFinite(first) && first > shards) {
      // reads(s) does not grow with s: the answer is in (memory, reads(memory)]
      let lo = shards;
      let hi = first;
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        if (readsAt(mid).reads.shards <= mid) hi = mid;
        else lo = mid;
      }
      shards = hi;
    }
  }
  const { load, work, reads } = readsAt(shards);
  const used = mem.timelineBytes + mem.listBytes + mem.postCacheBytes;
  const imbalance = shardImbalance(mem, shards);
  return {
    load,
    redis: {
      usedBytes: used,
      provisionedBytes: ((used * imbalance * s.fragmentation) / spare(ctx.headroom)) * (1 + s.replicas),
      imbalance,
      memoryShards: memShards.shards,
      readShards: reads.shards,
      shards,
      nodes: shards * (1 + s.replicas),
      utilisation: shardUtilisation(work, shards),
      readP99Seconds: readP99(work, shards),
      sloUtilisation: reads.sloRho,
      work,
    },
  };
}

export function partitions(load: Load, workers: number, ctx: PlanContext): Figures['partitions'] {
  const expand = ctx.scenario.infrastructure.costs.expand;
  const expansion = Math.max(1, Math.ceil((load.postsPeak * expand) / spare(ctx.headroom) - 1e-9));
  return { expansion, consumers: workers, value: Math.max(expansion, workers) };
}

/**
 * The API tier the simulator runs (infrastructure.api; its defaults when the scenario leaves it
 * out): a page's CPU, its base, lists and posts, and the cores of an instance.
 */
export function apiPageCpu(load: Load, ctx: PlanContext): { cpu: number; idleCpu: number; coresPerInstance: number; backgroundCpu: number } {
  const sc = ctx.scenario;
  const api = sc.infrastructure.api ?? API_DEFAULTS;
  // every list charged a full slice (list-reads.ts): the tier sized for the heaviest pages
  const lists = listsPerPage(load.listsPerPage);
  // and each page finds it idle the headroom's share of the time (api-tier.ts idleCpuAt)
  const idleCpu = idleCpuAt(api, spare(ctx.headroom));
  const cpu = api.cpuPerRead + fullListsCpuSeconds(api, lists, sc.activity.pageSize) + api.cpuPerPost * sc.activity.pageSize + idleCpu;
  return { cpu, idleCpu, coresPerInstance: api.coresPerInstance, backgroundCpu: api.backgroundCpu };
}

export function apiInstances(load: Load, readP99Seconds: number, ctx: PlanContext): Figures['api'] {
  const page = apiPageCpu(load, ctx);
  const offered = littlesLaw(load.pagesPeak, page.cpu);
  const staffed = squareRootStaffing(offered, ctx.settings.staffingQ);
  return {
    offeredCores: offered,
    staffedCores: staffed,
    // each (1 - H) busy, its background (api.backgroundCpu) beside the pages
    instances: instancesFor(page, staffed, spare(ctx.headroom)),
    inFlight: littlesLaw(load.pagesPeak, readP99Seconds + page.cpu),
  };
}

export function postgresConnections(load: Load, ctx: PlanContext): Figures['postgres'] {
  const offered = littlesLaw(load.rebuildsPerSecond, ctx.scenario.infrastructure.costs.rebuild);
  const staffed = squareRootStaffing(offered, ctx.settings.staffingQ);
  return {
    rebuildsPerSecond: load.rebuildsPerSecond,
    rowsPerSecond: load.rebuildsPerSecond * load.entriesPerRebuild,
    offered,
    connections: staffed === 0 ? 0 : Math.ceil(staffed / spare(ctx.headroom) - 1e-9),
  };
}

export interface Overrides {
  workers?: number;
  shards?: number;
}

/** Every resource at one point of the inputs (with the fleet fixed from outside where given). */
export function evaluatePoint(w: Workload, ctx: PlanContext, point: PlanPoint, fixed: Overrides = {}): Figures {
  const sc = ctx.scenario;
  const load0 = loadAt(w, sc, ctx.policy, point, ctx.growth);
  const memory = memoryAt(w, load0, sc.policy.timelineCap, sc.policy.celebrityListLength, { bytes: ctx.settings.postBodyBytes, ttlSeconds: ctx.settings.postCacheTtl });
  const fanout = fanoutWorkers(load0, ctx, fixed.workers);
  const { redis, load } = redisFleet(load0, memory, ctx, fixed.shards);
  return {
    point,
    load,
    memory,
    fanout,
    redis,
    partitions: partitions(load, fanout.workers, ctx),
    api: apiInstances(load, redis.readP99Seconds, ctx),
    postgres: postgresConnections(load, ctx),
  };
}

export function resourceValue(f: Figures, id: ResourceId): number {
  switch (id) {
    case 'fanoutWorkers':
      return f.fanout.workers;
    case 'redisMemory':
      return f.redis.provisionedBytes;
    case 'redisShards':
      return f.redis.shards;
    case 'redisNodes':
      return f.redis.nodes;
    case 'partitions':
      return f.partitions.value;
    case 'apiInstances':
      return f.api.instances;
    case 'postgresConnections':
      return f.postgres.connections;
  }
}

// ---- reasons: the arithmetic behind each number, in words

const pct = (x: number) => `${Math.round(x * 100)}%`;
const int = (n: number) => Math.round(n).toLocaleString('en-US');
/** "1 worker", "21 workers" (counts with thousands separators). */
export const plural = (n: number, one: string, many = `${one}s`) => `${Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : n} ${n === 1 ? one : many}`;
/** "38 shards (76 nodes with replicas)", "1 shard": primaries, and the nodes they take with their replicas. */
export const shardsText = (shards: number, replicas: number) =>
  replicas > 0 ? `${plural(shards, 'shard')} (${plural(shards * (1 + replicas), 'node')} with replicas)` : plural(shards, 'shard');
const rate = (x: number) => `${formatCount(x)}/s`;
export const fmtTime = (s: number) => (!Number.isFinite(s) ? 'unbounded' : s === 0 ? '0 s' : formatDuration(s));

export function reasonFor(id: ResourceId, f: Figures, ctx: PlanContext): string {
  const sc = ctx.scenario;
  const s = ctx.settings;
  const busy = pct(1 - ctx.headroom);
  const L = f.load;
  switch (id) {
    case 'fanoutWorkers': {
      const per = sc.infrastructure.writesPerSecondPerWorker;
      const lagWhy = L.burst && L.burst.deliveries > 0
        ? `a celebrity burst of ${formatCount(L.burst.deliveries)} pushed deliveries within ${fmtTime(L.burst.window)}`
        : L.namedWritesMean > 0 ? `celebrities pushed to ${formatCount(L.largestPost)} followers a post` : 'ordinary posts';
      const lag = Number.isFinite(f.fanout.lag) ? int(f.fanout.lag) : 'no finite number';
      return `peak ${rate(L.writesPeak)} timeline writes / ${formatCount(per)} per worker at <= ${busy} busy = ${int(f.fanout.throughput)}; the lag objective (p99 <= ${fmtTime(sc.slo.fanoutLagP99)}) needs ${lag} for ${lagWhy} (closed-form p99 ${fmtTime(f.fanout.lagSeconds)} with ${plural(f.fanout.workers, 'worker')})`;
    }
    case 'redisMemory': {
      const m = f.memory;
      const perEntry = m.timelines > 0 && L.timelineLengthRatio > 0 ? ` (${formatCount(m.timelines)} timelines, ${formatBytes(m.timelineBytes / Math.max(1, m.timelines))} each with Redis 7's encodings)` : '';
      return `timelines ${formatBytes(m.timelineBytes)}${perEntry} + celebrity/pulled lists ${formatBytes(m.listBytes)} + post bodies ${formatBytes(m.postCacheBytes)} (${formatCount(L.postsMean * s.postCacheTtl)} posts of ${formatBytes(s.postBodyBytes)} over ${fmtTime(s.postCacheTtl)}) = ${formatBytes(f.redis.usedBytes)} used; x ${f.redis.imbalance.toFixed(3)} largest shard/mean x ${s.fragmentation} fragmentation / ${busy} (headroom) x ${1 + s.replicas} copies (${plural(s.replicas, 'replica')}) = ${formatBytes(f.redis.provisionedBytes)}`;
    }
    case 'redisShards': {
      const r = f.redis;
      const perShard = (s.redisNodeMemory * (1 - ctx.headroom)) / s.fragmentation;
      const readPart = Number.isFinite(r.readShards)
        ? `reads: ${formatDuration(r.work.spread)} of Redis work per second at the peak${r.work.hot > 0 ? ` (+ ${pct(r.work.hot)} of one shard for the hottest list)` : ''}, the busiest shard kept under ${pct(Math.min(r.sloUtilisation, 1 - ctx.headroom))} (the read p99 of ${fmtTime(sc.slo.readP99)} allows ${pct(r.sloUtilisation)}) = ${int(r.readShards)}`
        : `reads: no shard count meets the read p99 of ${fmtTime(sc.slo.readP99)} (the hottest list alone keeps one shard ${pct(r.work.hot)} busy)`;
      const sets = !Number.isFinite(r.readShards) ? 'so memory alone sets the count' : r.memoryShards >= r.readShards ? 'memory sets it' : 'read latency sets it';
      const after = r.readP99Seconds <= sc.slo.readP99 ? '' : ` (over the objective of ${fmtTime(sc.slo.readP99)})`;
      return `memory: ${formatBytes(r.usedBytes)} x ${r.imbalance.toFixed(3)} imbalance into ${formatBytes(perShard)} a shard (${formatBytes(s.redisNodeMemory)} nodes, ${busy} of it, / ${s.fragmentation} fragmentation) = ${int(r.memoryShards)}; ${readPart}; ${sets}: ${plural(r.shards, 'shard')}, the busiest ${pct(r.utilisation)} busy, read p99 ${fmtTime(r.readP99Seconds)}${after}`;
    }
    case 'redisNodes':
      return `${plural(f.redis.shards, 'primary', 'primaries')} x (1 + ${plural(s.replicas, 'replica')}) of ${formatBytes(s.redisNodeMemory)} each`;
    case 'partitions': {
      const p = f.partitions;
      return `expansion: peak ${rate(L.postsPeak)} posts x ${fmtTime(sc.infrastructure.costs.expand)} reading follower lists, at <= ${busy} busy = ${int(p.expansion)}; consumers: one partition per fan-out worker (a consumer group uses at most one consumer per partition) = ${int(p.consumers)}`;
    }
    case 'apiInstances': {
      const a = f.api;
      const page = apiPageCpu(L, ctx);
      const idle = page.idleCpu > 0 ? `, and ${fmtTime(page.idleCpu)} of CPU it pays finding the tier idle the headroom's share of the time` : '';
      const sizing =
        page.backgroundCpu > 0
          ? `, in instances of ${page.coresPerInstance} cores each ${busy} busy less ${page.backgroundCpu} cores of background (${requestCoresPerProcess(page, spare(ctx.headroom)).toFixed(2)} cores for pages)`
          : `, / ${busy} = ${int(Math.ceil(a.staffedCores / (1 - ctx.headroom) - 1e-9))} cores in instances of ${page.coresPerInstance}`;
      return `Little's law: peak ${rate(L.pagesPeak)} feed pages x ${fmtTime(page.cpu)} CPU (infrastructure.api: a page's base, its ${listsPerPage(L.listsPerPage).toFixed(1)} lists and ${sc.activity.pageSize} posts${idle}) = ${a.offeredCores.toFixed(1)} cores busy; square-root staffing ceil(a + ${s.staffingQ} sqrt(a)) = ${int(a.staffedCores)} cores${sizing} = ${plural(a.instances, 'instance')}; ${!Number.isFinite(a.inFlight) ? 'unbounded requests in flight (the read p99 is unbounded)' : `${a.inFlight < 10 ? a.inFlight.toFixed(1) : formatCount(a.inFlight)} requests in flight (Little's law at the read p99)`}`;
    }
    case 'postgresConnections': {
      const p = f.postgres;
      if (p.rebuildsPerSecond <= 0) return `no cold starts to serve (${L.coldStartCause}); active users' timelines are kept warm by pushes and reads`;
      return `cold starts from ${L.coldStartCause}: ${rate(p.rebuildsPerSecond)} timeline rebuilds at the peak x ${fmtTime(sc.infrastructure.costs.rebuild)} each = ${p.offered.toFixed(1)} connections busy (Little's law); square-root staffing ceil(a + ${s.staffingQ} sqrt(a)) / ${busy} = ${int(p.connections)}; Postgres reads ${rate(p.rowsPerSecond)} timeline rows`;
    }
  }
}
