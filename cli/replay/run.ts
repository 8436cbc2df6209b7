// One policy replayed, start to end: the world (re)loaded into Postgres, the caches emptied, the
// stack started with the policy, the caches warmed, the machine's maximum read rate checked against
// what the schedule offers, the measured window, the stack stopped, the result document built.
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import { formatPolicy, type FanoutPolicy } from '../../core/fanout-policy.js';
import { dropKeyspace, keyspace } from '../../server/cache/redis.js';
import { resolveDatabaseUrl, type Store } from '../../server/store/pool.js';
import { readRateRefusal, type OfferedLoad } from '../../sim/replay/capacity.js';
import { CpuMeter } from '../../sim/replay/cpu.js';
import { openConnections } from '../../sim/replay/http-client.js';
import { buildReplayResult, type IntervalSample } from '../../sim/replay/result.js';
import { usedMemory } from '../../sim/replay/redis-figures.js';
import type { IntervalFigures } from '../../sim/replay/driver.js';
import { autocannonClosedLoop, ownClosedLoop, type SaturationFigure } from '../../sim/replay/saturation.js';
import type { RunResult } from '../../sim/result.js';
import { InputError } from '../errors.js';
import { measureWindow } from './measure.js';
import type { Watchdog } from './processes.js';
import { commandsPerRead } from './commands-per-read.js';
import { REPLAY } from './settings.js';
import { startStack, targetStack, type RunningStack, type StackServices } from './stack.js';
import { warmCaches } from './warm.js';
import { keptTimelines, loadWorld, type LiveWorld } from './world.js';


export interface ReplayEnv {
  world: LiveWorld;
  offered: OfferedLoad;
  services: StackServices;
  /** Self-contained (the stack is ours to start) or a running deployment at this URL. */
  target: URL | null;
  /** Load the world into Postgres before each policy (self-contained always; a target unless --no-load). */
  load: boolean;
  /** Replace what a target's tables hold (--replace). */
  replace: boolean;
  tokenSecret: string;
  redis: Redis;
  store: Store;
  /** Statistics and backend lookups go through this: another database of the server when `store` is the scratch one. */
  statsStore: Store;
  watchdog: Watchdog | null;
  signal: AbortSignal;
  log: (line: string) => void;
  progress: (label: string) => { update(fraction: number, detail: string): void; done(detail?: string): void };
  /** The measured window begins, lasting this many wall seconds. */
  onStart?: (wallSeconds: number, baselineUsedMemory: number) => void;
  onInterval?: (bucket: IntervalFigures, sample: IntervalSample) => void;
}

/** A replay this machine cannot carry (exit 2), after what was started is stopped. */
export class ReplayRefusal extends InputError {}

/** Stopped (q, Ctrl-C) before the policy's measured window began: nothing of it to report. */
export class ReplayStopped extends Error {}

function checkStopped(signal: AbortSignal): void {
  if (signal.aborted) throw new ReplayStopped('stopped before the measured window');
}

function readsFor(env: ReplayEnv, stack: RunningStack): { path: string; token: string }[] {
  const active = env.world.population.activeUsers;
  const n = Math.min(REPLAY.saturation.readers, active.length);
  const path = `/v1/feed?limit=${env.world.mapping.scenario.activity.pageSize}`;
  return Array.from({ length: n }, (_, i) => ({ path, token: stack.token(active[Math.floor((i * active.length) / n)]) }));
}

/** Closed-loop maximum read rate: ours (and autocannon's, for --max), side by side. */
export async function saturation(env: ReplayEnv, stack: RunningStack, both: boolean): Promise<{ own: SaturationFigure; autocannon: SaturationFigure | null }> {
  const reads = readsFor(env, stack);
  const sat = REPLAY.saturation;
  const o = { host: stack.host, port: stack.port, reads, connections: sat.connections, warmupMs: sat.warmupMs };
  const own = await ownClosedLoop({ ...o, durationMs: both ? sat.maxMs : sat.checkMs });
  const autocannon = both ? await autocannonClosedLoop({ ...o, durationMs: sat.maxMs }) : null;
  return { own, autocannon };
}

export interface PolicyOutcome {
  result: RunResult | null;
  saturation: { own: SaturationFigure; autocannon: SaturationFigure | null } | null;
}

/**
 * Replay one policy. `maxOnly` (--max): stop after the closed-loop saturation, no open loop.
 * Throws ReplayRefusal when the schedule offers more reads than the machine sustains.
 */
export async function replayPolicy(env: ReplayEnv, policy: FanoutPolicy, label: string, maxOnly = false): Promise<PolicyOutcome> {
  const { world, services: s } = env;
  const sc = world.mapping.scenario;
  const say = (line: string) => env.log(`${label}: ${line}`);

  // a fresh starting state: the caches empty (a target's only when the world is loaded anew: its
  // event log stays), the world as loaded
  if (env.target === null || env.load) await dropKeyspace(env.redis, keyspace(s.keyPrefix));
  if (env.target === null) await dropKeyspace(env.redis, keyspace(s.streamPrefix));
  let loadSeconds = NaN;
  if (env.load) {
    const p = env.progress(`${label}: loading`);
    const f = await loadWorld(env.store, world, Date.now(), env.target === null || env.replace, (fr, d) => p.update(fr, d));
    p.done(`${f.users.toLocaleString('en-US')} users, ${f.follows.toLocaleString('en-US')} follows, ${f.posts.toLocaleString('en-US')} posts of the last ${sc.policy.leaseDays} days`);
    loadSeconds = f.seconds;
  }
  checkStopped(env.signal);
  const baseline = await usedMemory(env.redis);

  const start = () =>
    env.target === null
      ? startStack(s, sc, policy, world.mapping.workers.started, env.tokenSecret, env.watchdog, world.schedule.outages.map((o) => o.service))
      : targetStack(env.target, s, policy, env.tokenSecret, env.redis);
  let stack = await start();
  if (env.target === null) say(`server (pid ${stack.processes[0].pid}) and ${stack.workerNames.length} worker process${stack.workerNames.length === 1 ? '' : 'es'} up on http://${stack.host}:${stack.port}, policy ${formatPolicy(policy)}`);
  try {
    let warm: { readers: number; seconds: number } | null = null;
    if (world.mapping.warm) {
      const kept = keptTimelines(world, policy);
      const p = env.progress(`${label}: warming`);
      const w = await warmCaches({
        host: stack.host,
        port: stack.port,
        token: stack.token,
        readers: kept.active,
        dormantKept: kept.dormantKept,
        pageSize: sc.activity.pageSize,
        redis: env.redis,
        store: env.store,
        keyPrefix: s.keyPrefix,
        scenario: sc,
        policy,
        onProgress: (fr, d) => p.update(fr, d),
        signal: env.signal,
      });
      checkStopped(env.signal);
      p.done(`${w.readers.toLocaleString('en-US')} readers' timelines, lists and followee sets${w.dormantTimelines > 0 ? `, ${w.dormantTimelines} dormant timelines` : ''}`);
      warm = { readers: w.readers, seconds: w.seconds };
    }

    checkStopped(env.signal);
    const sat = world.population.activeUsers.length > 0 ? await saturation(env, stack, maxOnly) : null;
    checkStopped(env.signal);
    if (maxOnly) return { result: null, saturation: sat };
    if (sat) {
      const refusal = readRateRefusal(env.offered, sat.own.rate, world.mapping.timeScale, world.mapping.users);
      if (refusal) throw new ReplayRefusal(`replay: ${refusal}`);
      say(`the server sustains ${Math.round(sat.own.rate).toLocaleString('en-US')} reads/s closed-loop; the schedule peaks at ${Math.round(env.offered.readsPerSecond.peak).toLocaleString('en-US')}/s`);
    }
    // commands per read on the warm steady state, before any post, cache loss or storm
    const p0 = env.progress(`${label}: commands per read`);
    p0.update(0, `an idle and a reads-only window of ${REPLAY.readsOnlyMs / 1000} s each`);
    const readsOnly = await commandsPerRead({
      redis: env.redis,
      host: stack.host,
      port: stack.port,
      token: stack.token,
      readers: world.population.activeUsers,
      pageSize: sc.activity.pageSize,
      rate: env.offered.readsPerSecond.mean,
      signal: env.signal,
    });
    p0.done();
    checkStopped(env.signal);
    if (!world.mapping.warm) {
      // a cold start: what the checks above read is forgotten (Redis's caches, and the API's
      // in-process followee sets with a restart; a target keeps the latter, and says so)
      await stack.stop();
      await dropKeyspace(env.redis, keyspace(s.keyPrefix));
      stack = await start();
      say(env.target === null ? 'caches emptied and the stack restarted: the window starts cold' : "Redis caches emptied: the window starts cold (the deployment's API keeps its in-process followee sets)");
      checkStopped(env.signal);
    }

    const pgPort = Number(new URL(resolveDatabaseUrl(s.databaseUrl)).port || 5432);
    const cpu = new CpuMeter(env.redis, null, pgPort, async (ports) => {
      if (ports.length === 0) return [];
      const r = await env.statsStore.pool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE client_port = ANY ($1::int[])', [ports]);
      return r.rows.map((row) => row.pid);
    });
    cpu.setProcesses(new Map(stack.processes.map((p) => [p.name, p.pid])));
    const [metricsConn] = await openConnections(stack.host, stack.port, 1);
    const p = env.progress(`${label}: replaying ${Math.round(world.mapping.wallSeconds)} s at x${world.mapping.timeScale}`);
    say(`window: ${Math.round(world.mapping.wallSeconds)} s of the schedule (${Math.round(world.mapping.simulatedSeconds / 60)} simulated minutes at x${world.mapping.timeScale}), from now`);
    env.onStart?.(world.mapping.wallSeconds, baseline);
    let figures;
    try {
      figures = await measureWindow({
        world,
        policy,
        host: stack.host,
        port: stack.port,
        token: stack.token,
        redis: env.redis,
        store: env.store,
        faults: stack.faults,
        statsStore: env.statsStore,
        database: new URL(s.databaseUrl).pathname.slice(1) || 'postgres',
        keyPrefix: s.keyPrefix,
        streamPrefix: s.streamPrefix,
        partitions: s.partitions,
        group: s.group,
        cpu,
        workerNames: stack.workerNames,
        processes: stack.processes,
        ownDatabase: env.target === null,
        metricsConn,
        signal: env.signal,
        onInterval: env.onInterval,
        onProgress: (fr, d) => p.update(fr, d),
        log: say,
      });
    } finally {
      metricsConn.close();
    }
    p.done();
    const result = buildReplayResult({
      ...figures,
      scenario: sc,
      mapping: world.mapping,
      graph: world.graph,
      population: world.population,
      schedule: world.schedule,
      digest: world.digest,
      offered: env.offered,
      policy: formatPolicy(policy),
      host: hostname(),
      target: {
        mode: env.target === null ? 'self-contained' : 'target',
        url: env.target === null ? `http://${stack.host}:${stack.port}` : env.target.toString(),
        scratch: env.target === null ? { database: new URL(s.databaseUrl).pathname.slice(1), keyPrefix: s.keyPrefix, streamPrefix: s.streamPrefix } : null,
        processes: stack.processes.map((p) => ({ name: p.name, pid: p.pid })),
      },
      world: { users: world.graph.users, follows: world.graph.edges, historyPosts: world.history.author.length, loadSeconds, warm },
      baselineUsedMemory: baseline,
      commands: { window: figures.commandsWindow, usecWindow: figures.commandsUsecWindow, readsOnly },
      saturation: { own: sat?.own ?? null, autocannon: sat?.autocannon ?? null },
      events: world.schedule.events.map((e) => ({ ...e, at: e.at / world.mapping.timeScale })),
    });
    return { result, saturation: sat };
  } finally {
    await stack.stop();
  }
}
