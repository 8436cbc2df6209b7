// A whole replay, from a validated input to its result documents: the live world built, the
// services reached, the starting state checked against the machine, every policy replayed in turn
// (a live sweep: the same schedule from the same starting state each time), the scratch space
// removed at the end whatever happened. It runs on the main thread for plain output, or in a worker
// thread behind the dashboard (cli/dashboard/replay-worker.ts), with the same hooks.
import { availableParallelism } from 'node:os';
import { formatPolicy, type FanoutPolicy } from '../../core/fanout-policy.js';
import { closeRedis } from '../../server/cache/redis.js';
import { DEFAULT_GROUP } from '../../server/worker/config.js';
import { footprintRefusal, offeredLoad, startingFootprint, type OfferedLoad } from '../../sim/replay/capacity.js';
import type { IntervalFigures } from '../../sim/replay/driver.js';
import type { ReplayMapping } from '../../sim/replay/mapping.js';
import type { IntervalSample } from '../../sim/replay/result.js';
import type { SaturationFigure } from '../../sim/replay/saturation.js';
import type { FiredEvent } from '../../sim/model/metrics.js';
import type { RunResult } from '../../sim/result.js';
import { formatBytes, formatCount } from '../../sim/scenario/units.js';
import { serviceCliError } from '../service-command.js';
import { machineRoom } from './room.js';
import { REPLAY } from './settings.js';
import { Watchdog } from './processes.js';
import { ReplayRefusal, ReplayStopped, replayPolicy, type ReplayEnv } from './run.js';
import { createScratchDatabase, dropScratch, scratchNames, type Scratch } from './scratch.js';
import { connectServiceRedis, openServiceStore } from './services.js';
import { buildWorld, type LiveWorld } from './world.js';


/** Everything a replay needs, as plain data (it crosses into a worker thread). */
export interface ReplayInput {
  mapping: ReplayMapping;
  policies: FanoutPolicy[];
  redisUrl: string;
  databaseUrl: string;
  /** A running deployment (null: self-contained). */
  target: string | null;
  /** Where a target keeps its data (ignored when self-contained: the scratch names are used). */
  schema: string;
  keyPrefix: string;
  streamPrefix: string;
  load: boolean;
  replace: boolean;
  tokenSecret: string;
  /** Only the closed-loop maximum (--max). */
  maxOnly: boolean;
}

export interface ReplayHooks {
  log: (line: string) => void;
  progress: (label: string) => { update(fraction: number, detail: string): void; done(detail?: string): void };
  /** A policy's measured window begins (wall seconds it will last). */
  onStart?: (index: number, policy: string, wallSeconds: number, baselineUsedMemory: number) => void;
  onInterval?: (index: number, bucket: IntervalFigures, sample: IntervalSample) => void;
  onFinished?: (index: number, result: RunResult) => void;
  /** The scenario's events as the schedule describes them, at their wall times (once the world is built). */
  onEvents?: (events: FiredEvent[]) => void;
  signal: AbortSignal;
}

export interface ReplayOutcome {
  world: Pick<LiveWorld, 'mapping' | 'digest'> & { users: number; follows: number; activeReaders: number };
  offered: OfferedLoad;
  runs: RunResult[];
  /** The policy whose window was stopped, if any (its partial result is last in runs for a single policy). */
  stoppedPolicy: string | null;
  notRun: string[];
  saturation: { own: SaturationFigure; autocannon: SaturationFigure | null } | null;
}

/** The replay, with the server code's errors as the CLI's (a refused load exits 2, an unreachable service 3). */
export async function runReplay(input: ReplayInput, hooks: ReplayHooks): Promise<ReplayOutcome> {
  try {
    return await replay(input, hooks);
  } catch (err) {
    throw serviceCliError('replay', err, () => false);
  }
}

async function replay(input: ReplayInput, hooks: ReplayHooks): Promise<ReplayOutcome> {
  const { log } = hooks;
  const gp = hooks.progress('graph');
  const world = await buildWorld(input.mapping, (f, d) => gp.update(f, d), availableParallelism());
  gp.done(`${formatCount(world.graph.users)} users, ${formatCount(world.graph.edges)} follows`);
  const m = world.mapping;
  const offered = offeredLoad(world.schedule, m.timeScale);
  log(
    `${m.scenario.name}: ${formatCount(m.users)} users, ${formatCount(world.graph.edges)} follows; ${formatCount(offered.postsPerSecond.mean)}/s posts (peak ${formatCount(offered.postsPerSecond.peak)}/s) and ` +
      `${formatCount(offered.readsPerSecond.mean)}/s feed pages (peak ${formatCount(offered.readsPerSecond.peak)}/s) offered for ${Math.round(m.wallSeconds)} s of wall time at time scale ${m.timeScale} ` +
      `(${Math.round(m.simulatedSeconds / 60)} simulated minutes); ${m.workers.started} fan-out worker process${m.workers.started === 1 ? '' : 'es'}`,
  );
  for (const note of m.notes) log(note);
  hooks.onEvents?.(world.schedule.events.map((e) => ({ ...e, at: e.at / m.timeScale })));

  const target = input.target === null ? null : new URL(input.target);
  const scratch: Scratch | null = target ? null : scratchNames(input.redisUrl, input.databaseUrl);
  const services = {
    redisUrl: input.redisUrl,
    databaseUrl: scratch?.databaseUrl ?? input.databaseUrl,
    schema: scratch?.schema ?? input.schema,
    keyPrefix: scratch?.keyPrefix ?? input.keyPrefix,
    streamPrefix: scratch?.streamPrefix ?? input.streamPrefix,
    partitions: REPLAY.partitions,
    group: DEFAULT_GROUP,
  };
  const redis = await connectServiceRedis(input.redisUrl, 'feedlab-replay');
  let store: Awaited<ReturnType<typeof openServiceStore>> | null = null;
  let statsStore: Awaited<ReturnType<typeof openServiceStore>> | null = null;
  const watchdog = scratch ? new Watchdog(null) : null;
  if (scratch) {
    watchdog!.send({ scratch });
    log(`scratch space: database ${scratch.database}, keys under ${scratch.keyPrefix} and ${scratch.streamPrefix} (removed at the end)`);
  }
  const outcome: ReplayOutcome = {
    world: { mapping: m, digest: world.digest, users: world.graph.users, follows: world.graph.edges, activeReaders: world.population.activeUsers.length },
    offered,
    runs: [],
    stoppedPolicy: null,
    notRun: [],
    saturation: null,
  };
  try {
    statsStore = await openServiceStore(input.databaseUrl, target ? services.schema : 'public', 'feedlab-replay-stats');
    if (scratch) await createScratchDatabase(scratch);
    store = scratch ? await openServiceStore(services.databaseUrl, services.schema, 'feedlab-replay') : statsStore;
    // the starting state must fit before anything is written
    const room = await machineRoom(redis, store, target === null);
    // the largest starting state of the policies (push keeps every timeline, pull none)
    const fp = input.policies
      .map((p) => startingFootprint(m.scenario, world.graph, world.population, world.history, p, world.followerCounts))
      .reduce((a, b) => (b.redisBytes > a.redisBytes ? b : a));
    const refusal = footprintRefusal(fp, room, m.users);
    if (refusal) throw new ReplayRefusal(`replay: ${refusal}`);
    log(`starting state: ${formatCount(fp.timelines)} warm timelines (~${formatBytes(fp.redisBytes)} in Redis), ~${formatBytes(fp.postgresBytes)} in Postgres`);

    const env: ReplayEnv = {
      world,
      offered,
      services,
      target,
      load: target === null || input.load,
      replace: input.replace,
      tokenSecret: input.tokenSecret,
      redis,
      store,
      statsStore,
      watchdog,
      signal: hooks.signal,
      log,
      progress: hooks.progress,
    };
    if (input.maxOnly) {
      outcome.saturation = (await replayPolicy(env, input.policies[0], formatPolicy(input.policies[0]), true)).saturation;
      return outcome;
    }
    const n = input.policies.length;
    for (let i = 0; i < n; i++) {
      const policy = input.policies[i];
      const label = n > 1 ? `[${i + 1}/${n}] ${formatPolicy(policy)}` : formatPolicy(policy);
      let r;
      try {
        r = await replayPolicy(
          // a target's tables hold the world loaded for the policy before: replace it
          { ...env, replace: env.replace || i > 0, onStart: (wall, baseline) => hooks.onStart?.(i, formatPolicy(policy), wall, baseline), onInterval: (b, s) => hooks.onInterval?.(i, b, s) },
          policy,
          label,
        );
      } catch (err) {
        if (!(err instanceof ReplayStopped)) throw err;
        outcome.stoppedPolicy = formatPolicy(policy);
        outcome.notRun = input.policies.slice(i + 1).map(formatPolicy);
        break;
      }
      const result = r.result!;
      hooks.onFinished?.(i, result);
      if (result.partial) {
        outcome.stoppedPolicy = formatPolicy(policy);
        // a stopped policy of a sweep is named, not compared; a single policy's partial result is the report
        if (n === 1) outcome.runs.push(result);
        outcome.notRun = input.policies.slice(i + 1).map(formatPolicy);
        break;
      }
      outcome.runs.push(result);
      if (hooks.signal.aborted) {
        outcome.notRun = input.policies.slice(i + 1).map(formatPolicy);
        break;
      }
    }
    return outcome;
  } finally {
    if (scratch) {
      try {
        const { keys } = await dropScratch(scratch);
        log(`removed the scratch database ${scratch.database} and ${keys} keys under ${scratch.keyPrefix} and ${scratch.streamPrefix}`);
        watchdog?.release();
      } catch (err) {
        log((err as Error).message);
      }
    }
    if (store && store !== statsStore) await store.pool.end().catch(() => {});
    await statsStore?.pool.end().catch(() => {});
    await closeRedis(redis).catch(() => {});
  }
}
