// feedlab serve: run the reference server's HTTP API (with the outbox relay, and optionally the
// fan-out worker) in this process.
import { TokenConfigError } from '../../server/auth/token.js';
import { describeServeConfig, loadServeConfig, ServeConfigError, startServer, type ServeFlags } from '../../server/serve.js';
import { parseCommandArgs } from '../args.js';
import { EXIT_OK, InputError } from '../errors.js';
import { SERVICE_OPTIONS, serviceCliError } from '../service-command.js';

export const summary = 'run the reference server: HTTP API, outbox relay, optionally the fan-out worker (--with-worker)';

const USAGE = 'feedlab serve [--port 8080] [--host 127.0.0.1] [--with-worker] [--threshold T] [--quiet] [...]';

const HELP = `${USAGE}

Serves the feed API (POST /v1/posts, DELETE /v1/posts/:id, PUT/DELETE /v1/follows/:userId,
GET /v1/feed, GET /v1/users/:id/posts, /healthz, /readyz, /metrics) over Postgres and Redis, and
moves the Postgres outbox onto the event log. Migrations run at start-up. Every /v1 request needs
"Authorization: Bearer $(feedlab token USER)". SIGINT/SIGTERM finish the requests in flight and
exit 0 (a second one exits at once).

  --port N            (FEED_PORT, default 8080; 0 picks a free port)
  --host H            (FEED_HOST, default 127.0.0.1; 0.0.0.0 for every interface)
  --with-worker       also run a fan-out worker in this process (one machine, one process)
  --concurrency N     with --with-worker: its consumers (FEED_CONCURRENCY, default 1)
  --batch-size N      with --with-worker: timelines per pipelined batch (FEED_BATCH_SIZE)
  --threshold T       pull authors with more followers than T on read (FEED_THRESHOLD, default 25000)
  --policy P          the workers' policy when not threshold (FEED_POLICY): push, pull, adaptive:T ...
  --timeline-cap N    entries per timeline (FEED_TIMELINE_CAP, default 800)
  --lease-days D      timeline TTL lease (FEED_LEASE_DAYS, default 7)
  --dormant-days D    readers unseen for D days are dormant (FEED_DORMANT_DAYS, default 14)
  --bus redis|kafka   the event log (FEED_BUS, default redis; Kafka at KAFKA_BROKERS)
  --node-id N         this instance's id in post ids, 0..1023, distinct per instance (FEED_NODE_ID, 0)
  --redis-url URL     (REDIS_URL, default redis://127.0.0.1:6379)
  --redis-cluster H:P,H:P  put the caches on a Redis Cluster with these seed nodes (REDIS_CLUSTER_NODES;
                      entries may be redis://[:password@]host:port); the Redis Streams event log
                      stays on the standalone Redis at REDIS_URL (or FEED_BUS=kafka)
  --database-url URL  (DATABASE_URL, default postgres://root@127.0.0.1:5432/postgres)
  --schema S          Postgres schema (FEED_PG_SCHEMA, default public)
  --key-prefix P      prefix of every cache key (FEED_KEY_PREFIX, default none)
  --stream-prefix P   Redis Streams key prefix (FEED_STREAM_PREFIX, default feedlab:events)
  --quiet             no configuration lines on stderr (errors still)

Secrets come from the environment only (a flag would show in the process list):
  FEED_TOKEN_SECRET   the HS256 secret of the bearer tokens, at least 32 bytes (required)
  FEED_CURSOR_SECRET  the MAC secret of feed cursors (default: derived from the token secret)
More environment: FEED_LIST_LENGTH (100), FEED_PARTITIONS (16), FEED_PG_POOL (20),
FEED_FOLLOWEE_TTL_MS (300000), KAFKA_BROKERS.
`;

export const OPTIONS = {
  ...SERVICE_OPTIONS,
  port: { type: 'string' },
  host: { type: 'string' },
  'with-worker': { type: 'boolean' },
  concurrency: { type: 'string' },
  'batch-size': { type: 'string' },
  'node-id': { type: 'string' },
} as const;

/** The server's errors as the CLI's; a port that cannot be listened on is bad input. */
function asCliError(err: unknown): unknown {
  const code = (err as { code?: string }).code;
  if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
    return new InputError(`serve: cannot listen there (${code}: ${(err as Error).message}); choose another --port or --host`);
  }
  return serviceCliError('serve', err, (e) => e instanceof ServeConfigError || e instanceof TokenConfigError || (e instanceof Error && e.name === 'WorkerConfigError'));
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('serve', argv, OPTIONS, USAGE);
  if (values.help) {
    process.stdout.write(HELP);
    return EXIT_OK;
  }
  if (positionals.length > 0) throw new InputError(`serve: unexpected argument "${positionals[0]}" (usage: ${USAGE})`);

  const flags = values as ServeFlags;
  let config;
  try {
    config = loadServeConfig(flags);
  } catch (err) {
    throw asCliError(err);
  }
  const info = (line: string) => {
    if (!values.quiet) process.stderr.write(`feedlab serve: ${line}\n`);
  };
  const always = (line: string) => process.stderr.write(`feedlab serve: ${line}\n`);
  for (const line of describeServeConfig(config)) info(line);

  // Signals stop the server once it runs; one arriving during start-up stops it right after.
  const stop = new AbortController();
  let signals = 0;
  const onSignal = (name: NodeJS.Signals) => {
    signals++;
    if (signals === 1) {
      info(`${name}: finishing the requests in flight, then stopping (${name} again to stop at once)`);
      stop.abort();
    } else {
      always(`${name} again: stopping at once`);
      process.exit(130);
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    let server;
    try {
      server = await startServer(config, {
        // Start-up and shutdown lines obey --quiet; trouble does not.
        log: (line) => (/^(migrations|listening|event log reachable|worker: (ready|policy now|migrations|bus|redis|postgres|policy|timelines|fan-out|relay))/.test(line) ? info(line) : always(line)),
      });
    } catch (err) {
      throw asCliError(err);
    }
    const stopped = new Promise<void>((resolve) => {
      if (stop.signal.aborted) resolve();
      else stop.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    try {
      await Promise.race([stopped, server.failed]);
    } catch (err) {
      always(`stopping: ${(err as Error).message}`);
      await server.close();
      throw asCliError(err);
    }
    await server.close();
    info('stopped');
    return EXIT_OK;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
