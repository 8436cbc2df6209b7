// The live stack one policy is replayed on. Self-contained: `feedlab serve` (the API and the outbox
// relay) and the mapped number of `feedlab worker` processes, on the scratch schema and prefixes,
// started with the policy and the scenario's timeline rules, stopped after the policy. Against a
// target: the running deployment, its workers switched to the policy through the runtime policy key.
import { formatPolicy, type FanoutPolicy } from '../../core/fanout-policy.js';
import { signToken } from '../../server/auth/token.js';
import type { Redis } from 'ioredis';
import { keyspace } from '../../server/cache/redis.js';
import { RUNTIME_POLICY_KEY } from '../../server/worker/config.js';
import { setRuntimePolicy } from '../../server/worker/process.js';
import type { Scenario } from '../../sim/scenario/types.js';
import { FaultProxy, type OutageMode } from './fault-proxy.js';
import { ServiceProcess, type Watchdog } from './processes.js';
import { REPLAY } from './settings.js';

/** Where the stack's services are and how they are named. */
export interface StackServices {
  redisUrl: string;
  databaseUrl: string;
  schema: string;
  keyPrefix: string;
  streamPrefix: string;
  partitions: number;
  group: string;
}

export interface RunningStack {
  host: string;
  port: number;
  /** Processes by name ('server', 'worker 1', ...): empty against a target. */
  processes: ServiceProcess[];
  workerNames: string[];
  /** A bearer token for a user (cached). */
  token(user: number): string;
  stop(): Promise<void>;
  /** The self-contained stack's fault controls (null against a target): SIGKILL `count` running
   * workers (null: every one), their indices; start those again (under new consumer names), once ready. */
  faults: {
    crashWorkers(count: number | null): Promise<number[]>;
    restartWorkers(indices: number[]): Promise<void>;
    /** SIGKILL the API; start it again on the same port, once listening. */
    crashServer(): Promise<void>;
    restartServer(): Promise<void>;
    /** The running processes' pids by name (for the CPU meter after a restart). */
    pids(): Map<string, number>;
    /** Take a service out of the processes' reach (its proxy: the stack was started with one), and give it back. */
    outage(service: ProxiedService, mode: OutageMode): { connections: number };
    heal(service: ProxiedService): { held: number; refused: number };
  } | null;
}

export type ProxiedService = 'redis' | 'postgres';

/** A process started again mid-run waits for a service out of reach (an outage the scenario also has) rather than exit. */
const RIDE_OUT = { FEED_FAIL_FAST: '0' };

/** Tokens outlive any replay (they are scratch secrets). */
const TOKEN_TTL_SECONDS = 24 * 3600;

function tokens(secret: string): (user: number) => string {
  const cache = new Map<number, string>();
  return (user) => {
    let t = cache.get(user);
    if (t === undefined) cache.set(user, (t = signToken(user, secret, { ttlSeconds: TOKEN_TTL_SECONDS })));
    return t;
  };
}

/** The settings both kinds of process take, from the scenario's policy section and infrastructure. */
function commonArgs(s: StackServices, sc: Scenario, policy: FanoutPolicy): string[] {
  return [
    '--redis-url', s.redisUrl,
    '--database-url', s.databaseUrl,
    '--schema', s.schema,
    '--key-prefix', s.keyPrefix,
    '--stream-prefix', s.streamPrefix,
    '--policy', formatPolicy(policy),
    '--timeline-cap', String(sc.policy.timelineCap),
    '--lease-days', String(sc.policy.leaseDays),
    '--dormant-days', String(sc.policy.dormantDays),
  ];
}

function commonEnv(s: StackServices, sc: Scenario, policy: FanoutPolicy, secret: string): Record<string, string> {
  return {
    FEED_TOKEN_SECRET: secret,
    FEED_PARTITIONS: String(s.partitions),
    FEED_LIST_LENGTH: String(sc.policy.celebrityListLength),
    FEED_READER_CAP: String(policy.readerCap),
    FEED_BACKLOG_BOUND: String(Math.round(policy.backlogBound)),
    FEED_MIN_THRESHOLD: String(policy.minThreshold),
    FEED_GROUP: s.group,
    // the stack is started once its services answered: one down now is a failure to report, not to wait out
    FEED_FAIL_FAST: '1',
  };
}

/**
 * Fan-out worker `i` of a stack (`worker i`, consumer `replay-<pid>-i`): no relay (the API runs it),
 * no migrations, no status lines; `env` adds settings (FEED_FAIL_FAST, say). Wait for workerReady.
 */
export function startWorker(s: StackServices, sc: Scenario, policy: FanoutPolicy, i: number, secret: string, env: Record<string, string> = {}, life = 0): ServiceProcess {
  return ServiceProcess.start(
    `worker ${i}`,
    // a worker started again (life 1, 2, ...) is a new consumer, as a restarted process elsewhere is
    ['worker', ...commonArgs(s, sc, policy), '--batch-size', String(sc.infrastructure.batchSize), '--consumer', `replay-${process.pid}-${i}${life > 0 ? `-r${life}` : ''}`],
    { ...commonEnv(s, sc, policy, secret), FEED_RELAY: '0', FEED_MIGRATE: '0', FEED_STATUS_MS: '0', ...env },
  );
}

export function workerReady(w: ServiceProcess): Promise<RegExpExecArray> {
  return w.ready(/^feedlab worker: ready: /, REPLAY.startTimeoutMs);
}

/**
 * Start the API and the workers; every pid goes to the watchdog before it is waited on. `proxied`:
 * the services the processes reach through a fault proxy of the replay's (for the scenario's
 * outages; the replay's own connections go straight to them).
 */
export async function startStack(
  services: StackServices,
  sc: Scenario,
  policy: FanoutPolicy,
  workers: number,
  secret: string,
  watchdog: Watchdog | null,
  proxied: readonly ProxiedService[] = [],
): Promise<RunningStack> {
  const started: ServiceProcess[] = [];
  const tell = () => watchdog?.send({ pids: started.map((p) => p.pid) });
  const proxies = new Map<ProxiedService, FaultProxy>();
  let stopped = false;
  const stop = async () => {
    stopped = true;
    // a service given back first: the processes finish their work on it
    for (const p of proxies.values()) p.restore();
    // workers first: they finish their batch; then the API (its relay has nothing left to move)
    await Promise.all(started.filter((p) => p.name !== 'server').map((p) => p.stop()));
    await started.find((p) => p.name === 'server')?.stop();
    watchdog?.send({ pids: [] });
    await Promise.all([...proxies.values()].map((p) => p.close()));
  };
  let s = services;
  try {
    for (const service of new Set(proxied)) {
      const front = await FaultProxy.inFront(service === 'redis' ? s.redisUrl : s.databaseUrl, service === 'redis' ? 6379 : 5432);
      proxies.set(service, front.proxy);
      s = service === 'redis' ? { ...s, redisUrl: front.url } : { ...s, databaseUrl: front.url };
    }
    const serve = (port: number, env: Record<string, string> = {}) =>
      ServiceProcess.start('server', ['serve', '--port', String(port), '--host', '127.0.0.1', ...commonArgs(s, sc, policy)], { ...commonEnv(s, sc, policy, secret), ...env });
    const listening = (p: ServiceProcess) => p.ready(/listening on http:\/\/([0-9.]+):(\d+)/, REPLAY.startTimeoutMs);
    const server = serve(0);
    started.push(server);
    tell();
    const m = await listening(server);
    const workerNames: string[] = [];
    for (let i = 1; i <= workers; i++) {
      const w = startWorker(s, sc, policy, i, secret);
      started.push(w);
      workerNames.push(w.name);
    }
    tell();
    await Promise.all(started.filter((p) => p.name !== 'server').map(workerReady));
    let lives = 0;
    const faults = {
      crashWorkers: async (count: number | null) => {
        const live = started.filter((p) => p.name.startsWith('worker ') && p.running);
        const chosen = live.slice(0, count ?? live.length);
        await Promise.all(chosen.map((p) => p.kill()));
        return chosen.map((p) => Number(p.name.slice('worker '.length)));
      },
      // a new consumer name, as a restarted process gets elsewhere: what the killed one held is
      // claimed from it once idle (FEED_CLAIM_IDLE_MS), and its last published figures stay counted
      restartWorkers: async (indices: number[]) => {
        if (stopped) throw new Error('the stack is stopped: no worker is started again');
        lives++;
        const fresh = indices.map((i) => startWorker(s, sc, policy, i, secret, RIDE_OUT, lives));
        for (const w of fresh) started[started.findIndex((p) => p.name === w.name)] = w;
        tell();
        await Promise.all(fresh.map(workerReady));
      },
      crashServer: () => started.find((p) => p.name === 'server')!.kill(),
      restartServer: async () => {
        if (stopped) throw new Error('the stack is stopped: the API is not started again');
        const fresh = serve(Number(m[2]), RIDE_OUT);
        started[started.findIndex((p) => p.name === 'server')] = fresh;
        tell();
        await listening(fresh);
      },
      pids: () => new Map(started.map((p) => [p.name, p.pid])),
      outage: (service: ProxiedService, mode: OutageMode) => {
        const proxy = proxyOf(service);
        const connections = proxy.connections;
        outageFrom.set(service, { held: proxy.held, refused: proxy.refused });
        if (mode === 'reset') proxy.cut();
        else proxy.hang();
        return { connections };
      },
      // the connections that arrived during the outage: held (a hang) or refused (a reset)
      heal: (service: ProxiedService) => {
        const proxy = proxyOf(service);
        const from = outageFrom.get(service) ?? { held: 0, refused: 0 };
        proxy.restore();
        return { held: proxy.held - from.held, refused: proxy.refused - from.refused };
      },
    };
    const outageFrom = new Map<ProxiedService, { held: number; refused: number }>();
    const proxyOf = (service: ProxiedService) => {
      const p = proxies.get(service);
      if (!p) throw new Error(`the stack reaches ${service} directly: start it with ${service} proxied for an outage`);
      return p;
    };
    return { host: m[1], port: Number(m[2]), processes: started, workerNames, token: tokens(secret), stop, faults };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * A running deployment: its workers are switched to the policy through the runtime policy key (its
 * API keeps the read threshold it started with; the registry of pulled authors keeps its reads
 * right whatever the workers pull, at the cost of merging lists it no longer needs).
 */
export async function targetStack(url: URL, s: StackServices, policy: FanoutPolicy, secret: string, redis: Redis): Promise<RunningStack> {
  const keys = keyspace(s.keyPrefix);
  const before = await redis.get(keys.key(RUNTIME_POLICY_KEY));
  await setRuntimePolicy(redis, keys, formatPolicy(policy));
  // the deployment gets back the runtime policy it had (none: its configured one)
  const stop = async () => {
    if (before === null) await setRuntimePolicy(redis, keys, null);
    else await redis.set(keys.key(RUNTIME_POLICY_KEY), before);
  };
  return { host: url.hostname, port: Number(url.port || 80), processes: [], workerNames: [], token: tokens(secret), stop, faults: null };
}
