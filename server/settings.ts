// Reading the server's and the workers' settings: a flag, else an environment variable, else the
// default, each checked with a one-line error that names where the bad value came from.
import { notLiveRunnable, parsePolicy, PolicySpecError, type FanoutPolicy } from '../core/fanout-policy.js';
import { redactUrl } from '../core/service-url.js';
import { CLUSTER_NODES_ENV, formatClusterSpec, parseClusterNodes, urlIsSeedNode, type ClusterSpec } from './cache/cluster.js';
import { CacheConfigError } from './cache/redis.js';
import { SERVICE_SETTINGS, type SettingRow } from './service-settings.js';

/** The event log a server or worker talks to. */
export type Bus = 'redis' | 'kafka';

/** Where one setting comes from: the flag, else the variable, else undefined. */
export interface Source {
  value: string | undefined;
  /** "--batch-size" or "FEED_BATCH_SIZE", for messages. */
  where: string;
}

export function pickSetting<F extends object>(flags: F, env: NodeJS.ProcessEnv, flag: (keyof F & string) | null, variable: string): Source {
  const f = flag ? flags[flag] : undefined;
  if (typeof f === 'string') return { value: f, where: `--${flag}` };
  const e = env[variable];
  if (e !== undefined && e.trim() !== '') return { value: e.trim(), where: variable };
  return { value: undefined, where: flag ? `--${flag}` : variable };
}

/** Typed readers that throw the caller's own configuration error. */
export class SettingsReader {
  constructor(private readonly fail: (message: string) => Error) {}

  integer(s: Source, dflt: number, min: number, max: number): number {
    if (s.value === undefined) return dflt;
    const m = /^(\d+(?:\.\d+)?)([kKmM]?)$/.exec(s.value.replace(/_/g, ''));
    const v = m ? Number(m[1]) * (m[2] === '' ? 1 : m[2].toLowerCase() === 'k' ? 1e3 : 1e6) : NaN;
    if (!Number.isSafeInteger(v) || v < min || v > max) throw this.fail(`${s.where}=${JSON.stringify(s.value)}: must be a whole number from ${min} to ${max}`);
    return v;
  }

  days(s: Source, dflt: number): number {
    if (s.value === undefined) return dflt;
    const v = Number(s.value);
    if (!/^\d+(\.\d+)?$/.test(s.value) || !(v > 0) || v > 3650) {
      throw this.fail(`${s.where}=${JSON.stringify(s.value)}: must be a number of days above 0 (e.g. 7 or 0.5), at most 3650`);
    }
    return v;
  }

  bool(flag: boolean | undefined, s: Source): boolean {
    if (flag === true) return true;
    if (s.value === undefined) return false;
    const v = s.value.toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(v)) return true;
    if (['0', 'false', 'no', 'off'].includes(v)) return false;
    throw this.fail(`${s.where}=${JSON.stringify(s.value)}: must be 1/true/yes/on or 0/false/no/off`);
  }

  url(s: Source, dflt: string, protocols: string[]): string {
    const v = s.value ?? dflt;
    let parsed: URL;
    try {
      parsed = new URL(v);
    } catch {
      throw this.fail(`${s.where}=${JSON.stringify(redactUrl(v))}: not a URL (expected ${protocols[0]}//...)`);
    }
    if (!protocols.includes(parsed.protocol)) {
      throw this.fail(`${s.where}=${JSON.stringify(redactUrl(v))}: must start with ${protocols.map((p) => p + '//').join(' or ')}`);
    }
    return v;
  }

  /** A cluster's seed nodes (REDIS_CLUSTER_NODES, --redis-cluster); null when unset. */
  cluster(s: Source): ClusterSpec | null {
    if (s.value === undefined) return null;
    try {
      return parseClusterNodes(s.value);
    } catch (err) {
      if (!(err instanceof CacheConfigError)) throw err;
      const shown = s.value.split(',').map((e) => redactUrl(e.trim())).join(',');
      throw this.fail(`${s.where}=${JSON.stringify(shown.slice(0, 200))}: ${err.message}`);
    }
  }

  name(s: Source, dflt: string, pattern: RegExp, what: string): string {
    const v = s.value ?? dflt;
    if (!pattern.test(v)) throw this.fail(`${s.where}=${JSON.stringify(v.slice(0, 80))}: ${what}`);
    return v;
  }
}

/** The settings serve and worker share (server/service-settings.ts), read and checked. */
export interface ServiceSettings {
  bus: Bus;
  kafkaBrokers: string[];
  redisUrl: string;
  /** Where the Redis URL came from (--redis-url or REDIS_URL), for messages. */
  redisUrlFrom: string;
  databaseUrl: string;
  pgSchema: string;
  keyPrefix: string;
  streamPrefix: string;
  partitions: number;
  group: string;
  /** The fan-out policy (FEED_POLICY over FEED_THRESHOLD and the reader-cap and adaptive settings). */
  policy: FanoutPolicy;
  timelineCap: number;
  listLength: number;
  leaseDays: number;
  dormantDays: number;
}

/** One row of the table from its flag, else its variable, else its default. */
function readRow(r: SettingRow, src: Source, read: SettingsReader, fail: (message: string) => Error): string | number | string[] {
  switch (r.kind) {
    case 'integer':
      return read.integer(src, r.default as number, r.min, r.max);
    case 'days':
      return read.days(src, r.default as number);
    case 'url':
      return read.url(src, r.default as string, [...r.protocols]);
    case 'name':
      return read.name(src, r.default as string, r.pattern, r.what);
    case 'choice': {
      const v = (src.value ?? String(r.default)).toLowerCase();
      if (!r.values.includes(v)) throw fail(`${src.where}=${JSON.stringify(src.value)}: must be ${r.values.join(' or ')}`);
      return v;
    }
    case 'hosts': {
      const hosts = (src.value ?? String(r.default))
        .split(',')
        .map((b) => b.trim())
        .filter((b) => b.length > 0);
      for (const b of hosts) {
        if (!/^[A-Za-z0-9.-]+:\d{1,5}$/.test(b) && !/^\[[0-9a-fA-F:]+\]:\d{1,5}$/.test(b)) {
          throw fail(`${src.where}: "${b.slice(0, 80)}" is not host:port (a comma-separated list of them)`);
        }
      }
      return hosts;
    }
    case 'policy':
      return src.value ?? String(r.default);
  }
}

/**
 * A policy from a spec over a base, refusing what a live worker cannot carry out: `rate` decides
 * per (author, reader) pair from read rates the worker does not track (a simulator what-if).
 * `where` names the spec's source in the message; `fail` makes the caller's error.
 */
export function livePolicy(spec: string, base: FanoutPolicy, where: string, fail: (message: string) => Error): FanoutPolicy {
  let policy: FanoutPolicy;
  try {
    policy = parsePolicy(spec, base);
  } catch (err) {
    if (err instanceof PolicySpecError) throw fail(`${where}: ${err.message}`);
    throw err;
  }
  const why = notLiveRunnable(policy);
  if (why) throw fail(`${where}: ${why}`);
  return policy;
}

/**
 * The shared settings from flags over environment over defaults, each checked against its row; the
 * policy spec over a base of the threshold and the reader-cap and adaptive settings, refused where
 * a live worker cannot run it (`rate`) or where it and the threshold disagree. `fail` makes the
 * caller's own configuration error.
 */
export function readServiceSettings<F extends object>(flags: F, env: NodeJS.ProcessEnv, fail: (message: string) => Error): ServiceSettings {
  const read = new SettingsReader(fail);
  const src = (r: SettingRow) => pickSetting(flags as Record<string, unknown>, env, r.flag ?? null, r.env);
  const get = <T>(r: SettingRow) => readRow(r, src(r), read, fail) as T;
  const S = SERVICE_SETTINGS;
  const thresholdSrc = src(S.threshold);
  const base: FanoutPolicy = {
    kind: 'threshold',
    threshold: get<number>(S.threshold),
    skipDormant: true,
    readerCap: get<number>(S.readerCap),
    backlogBound: get<number>(S.backlogBound),
    minThreshold: get<number>(S.minThreshold),
  };
  const policySrc = src(S.policy);
  const policy = livePolicy(get<string>(S.policy), base, policySrc.where, fail);
  if (thresholdSrc.value !== undefined && policySrc.value !== undefined && (policy.kind === 'threshold' || policy.kind === 'adaptive') && policy.threshold !== base.threshold) {
    throw fail(`${policySrc.where}=${policySrc.value} and ${thresholdSrc.where}=${thresholdSrc.value} disagree on the threshold: set one of them`);
  }
  return {
    bus: get<Bus>(S.bus),
    kafkaBrokers: get<string[]>(S.kafkaBrokers),
    redisUrl: get<string>(S.redisUrl),
    redisUrlFrom: src(S.redisUrl).where,
    databaseUrl: get<string>(S.databaseUrl),
    pgSchema: get<string>(S.pgSchema),
    keyPrefix: get<string>(S.keyPrefix),
    streamPrefix: get<string>(S.streamPrefix),
    partitions: get<number>(S.partitions),
    group: get<string>(S.group),
    policy,
    timelineCap: get<number>(S.timelineCap),
    listLength: get<number>(S.listLength),
    leaseDays: get<number>(S.leaseDays),
    dormantDays: get<number>(S.dormantDays),
  };
}

/**
 * Where the caches live when not on the Redis at REDIS_URL: a Redis Cluster named by
 * REDIS_CLUSTER_NODES or the flag (null: no cluster). The event log never goes on the cluster (a
 * consumer reads every partition stream in one XREADGROUP, which a cluster refuses across slots):
 * with a cluster, a Redis Streams log stays on the standalone Redis at REDIS_URL, so a REDIS_URL
 * naming one of the cluster's nodes is refused here in one line (and a REDIS_URL that turns out
 * to be a cluster node at start-up, by serve and worker).
 */
export function readCacheCluster<F extends object>(
  flags: F,
  env: NodeJS.ProcessEnv,
  flag: (keyof F & string) | null,
  read: SettingsReader,
  fail: (message: string) => Error,
  eventLog: { bus: Bus; redisUrl: string; where: string },
): ClusterSpec | null {
  const src = pickSetting(flags, env, flag, CLUSTER_NODES_ENV);
  const cluster = read.cluster(src);
  if (cluster && eventLog.bus === 'redis' && urlIsSeedNode(eventLog.redisUrl, cluster)) {
    throw fail(
      `${eventLog.where}=${JSON.stringify(redactUrl(eventLog.redisUrl))} is one of the ${src.where} nodes: the Redis Streams event log needs a standalone Redis at REDIS_URL (or FEED_BUS=kafka); the cluster holds the caches only`,
    );
  }
  return cluster;
}

/** The message for a REDIS_URL found to be a cluster node at start-up, for the event log. */
export function eventLogOnClusterMessage(redisUrl: string): string {
  return `the event log's REDIS_URL ${redactUrl(redisUrl)} is a Redis Cluster node: Redis Streams needs a standalone Redis there (or FEED_BUS=kafka); the cluster (${CLUSTER_NODES_ENV}) holds the caches only`;
}

/** The message for a REDIS_URL found to be a cluster node at start-up, with no cluster configured. */
export function cacheOnClusterNodeMessage(redisUrl: string): string {
  return `REDIS_URL ${redactUrl(redisUrl)} is a Redis Cluster node: set ${CLUSTER_NODES_ENV} (or --redis-cluster) to put the caches on the cluster, and REDIS_URL to a standalone Redis for the event log (or FEED_BUS=kafka)`;
}

/**
 * Start-up lines (serve's, the worker's) with the caches on a cluster: the `redis` line names the
 * cluster, and a Redis Streams `bus` line says it stays on the standalone Redis.
 */
export function describeWithCluster(lines: readonly string[], cluster: ClusterSpec | null | undefined, keyPrefix: string): string[] {
  if (!cluster) return [...lines];
  return lines.map((line) => {
    if (line.startsWith('redis ')) {
      return `redis     ${formatClusterSpec(cluster)}${keyPrefix ? ` (key prefix "${keyPrefix}")` : ''}: timelines, recent lists, post bodies, locks, metrics`;
    }
    if (line.startsWith('bus ') && line.includes('redis streams')) {
      return line.replace(/^(bus\s+redis streams .*? at [^\s;]+)/, '$1 (standalone Redis: the event log never goes on the cluster)');
    }
    return line;
  });
}
