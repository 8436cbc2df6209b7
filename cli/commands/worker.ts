// feedlab worker: run fan-out workers (consumers of the post-event log) and optionally the outbox relay.
import { describeWithCluster, readCacheCluster, SettingsReader } from '../../server/settings.js';
import { describeWorkerConfig, loadWorkerConfig, WorkerConfigError, type WorkerFlags } from '../../server/worker/config.js';
import { runWorker } from '../../server/worker/process.js';
import { parseCommandArgs } from '../args.js';
import { EXIT_OK, InputError } from '../errors.js';
import { SERVICE_OPTIONS, serviceCliError } from '../service-command.js';

export const summary = 'run fan-out workers: post events -> follower timelines / celebrity lists (--concurrency N, --relay)';

const USAGE = 'feedlab worker [--concurrency N] [--relay] [--policy P] [--threshold T] [--migrate] [--json] [--quiet] [...]';

const HELP = `${USAGE}

Consumes post events (Redis Streams, or Kafka with FEED_BUS=kafka) and fans them out: authors at or
under the threshold into their followers' timelines (dormant followers skipped), authors over it
once into their own recent-post list. At-least-once and idempotent. SIGINT/SIGTERM finish the batch
in hand and exit 0 (a second one exits at once).

  --concurrency N     consumers in this process (FEED_CONCURRENCY, default 1)
  --relay             also move the Postgres outbox onto the event log (FEED_RELAY=1)
  --policy P          push | pull | threshold:T | reader-cap:N | adaptive:T, optionally :skip-dormant or
                      :all-followers (FEED_POLICY, default threshold). At run time, SET the Redis key
                      feed:config:policy (under the key prefix) to a spec to switch every worker.
  --threshold T       pull authors with more followers than T (FEED_THRESHOLD, default 25000)
  --batch-size N      followers per pipelined round trip (FEED_BATCH_SIZE, default 1000)
  --page-size N       followers per Postgres page (FEED_PAGE_SIZE, default 10000)
  --pipelines N       round trips in flight per fan-out (FEED_PIPELINES, default 2)
  --timeline-cap N    entries per timeline (FEED_TIMELINE_CAP, default 800)
  --lease-days D      timeline TTL lease (FEED_LEASE_DAYS, default 7)
  --dormant-days D    skip followers not seen for D days (FEED_DORMANT_DAYS, default 14)
  --bus redis|kafka   the event log (FEED_BUS, default redis; Kafka at KAFKA_BROKERS)
  --group G           consumer group (FEED_GROUP, default fanout)
  --consumer NAME     consumer name base (FEED_CONSUMER, default host-pid); consumers are NAME-1..N
  --redis-url URL     (REDIS_URL, default redis://127.0.0.1:6379)
  --redis-cluster H:P,H:P  write timelines and lists to a Redis Cluster with these seed nodes
                      (REDIS_CLUSTER_NODES; entries may be redis://[:password@]host:port); the Redis
                      Streams event log stays on the standalone Redis at REDIS_URL (or FEED_BUS=kafka)
  --database-url URL  (DATABASE_URL, default postgres://root@127.0.0.1:5432/postgres)
  --schema S          Postgres schema (FEED_PG_SCHEMA, default public)
  --key-prefix P      prefix of every cache key (FEED_KEY_PREFIX, default none)
  --stream-prefix P   Redis Streams key prefix (FEED_STREAM_PREFIX, default feedlab:events)
  --migrate           apply pending migrations at start-up (FEED_MIGRATE=1)
  --json              print a feedlab.worker/1 summary on stdout when stopped
  --quiet             no configuration or status lines on stderr (errors still)

More environment: FEED_LIST_LENGTH, FEED_READER_CAP, FEED_BACKLOG_BOUND, FEED_MIN_THRESHOLD,
FEED_EVENT_CONCURRENCY, FEED_EVENT_BATCH, FEED_CLAIM_IDLE_MS, FEED_PARTITIONS, FEED_PG_POOL,
FEED_POLICY_POLL_MS, FEED_STATUS_MS.
`;

export const OPTIONS = {
  ...SERVICE_OPTIONS,
  concurrency: { type: 'string' },
  relay: { type: 'boolean' },
  migrate: { type: 'boolean' },
  'batch-size': { type: 'string' },
  'page-size': { type: 'string' },
  pipelines: { type: 'string' },
  group: { type: 'string' },
  consumer: { type: 'string' },
  json: { type: 'boolean' },
} as const;

const asCliError = (err: unknown): unknown => serviceCliError('worker', err, (e) => e instanceof WorkerConfigError);

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('worker', argv, OPTIONS, USAGE);
  if (values.help) {
    process.stdout.write(HELP);
    return EXIT_OK;
  }
  if (positionals.length > 0) throw new InputError(`worker: unexpected argument "${positionals[0]}" (usage: ${USAGE})`);

  let config;
  let redisCluster;
  try {
    config = loadWorkerConfig(values as WorkerFlags);
    const fail = (m: string) => new WorkerConfigError(m);
    const where = values['redis-url'] !== undefined ? '--redis-url' : 'REDIS_URL';
    redisCluster = readCacheCluster(values, process.env, 'redis-cluster', new SettingsReader(fail), fail, { bus: config.bus, redisUrl: config.redisUrl, where });
  } catch (err) {
    throw asCliError(err);
  }
  const info = (line: string) => {
    if (!values.quiet) process.stderr.write(`feedlab worker: ${line}\n`);
  };
  const always = (line: string) => process.stderr.write(`feedlab worker: ${line}\n`);
  for (const line of describeWithCluster(describeWorkerConfig(config), redisCluster, config.keyPrefix)) info(line);

  const stop = new AbortController();
  let signals = 0;
  const onSignal = (name: NodeJS.Signals) => {
    signals++;
    if (signals === 1) {
      info(`${name}: finishing the batch in hand, then stopping (${name} again to stop at once)`);
      stop.abort();
    } else {
      always(`${name} again: stopping at once (unacknowledged events will be delivered again)`);
      process.exit(130);
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const result = await runWorker(config, {
      signal: stop.signal,
      redisCluster,
      // Status and start-up lines obey --quiet; errors do not.
      log: (line) => (/^(ready|policy now|migrations|\d+ posts)/.test(line) ? info(line) : always(line)),
    });
    info(
      `stopped after ${result.seconds.toFixed(1)} s: ${result.counters.eventsCreated} posts, ${result.counters.timelineWrites} timeline writes (${Math.round(result.writesPerSecond)}/s)`,
    );
    if (values.json) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
    return EXIT_OK;
  } catch (err) {
    throw asCliError(err);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
