// A calibration against a running deployment (--target): its Redis and Postgres measured with the
// server's code on its own rows, read only (authors picked by users.follower_count for the
// expansion fit, readers by followee_count for the rebuilds), the lists calibrate writes (the
// write fit's timelines, the event authors' lists, the rebuilt timelines, a page's bodies) under a
// scratch key prefix of its own that expires by itself and is removed at the end; the post-to-log
// hop from the newest entries of its event log (its own traffic; nothing is posted). The API tier
// is refused: its CPU is read from the server's process on this machine (/proc), which a target's
// is not.
import type { Redis } from 'ioredis';
import { DEFAULT_CELEBRITY_THRESHOLD, SECONDS_PER_DAY } from '../../core/timeline-rules.js';
import { PostBodyCache } from '../../server/cache/post-bodies.js';
import { closeRedis, keyspace } from '../../server/cache/redis.js';
import { TimelineCache } from '../../server/cache/timelines.js';
import { readSlices } from '../../server/cache/post-list.js';
import { resolveDatabaseUrl, type Store } from '../../server/store/pool.js';
import { FeedRepository } from '../../server/store/repository.js';
import { IDLE_CURVE_KEYS, type Refusal } from '../../sim/calibration/document.js';
import { KeepAliveConnection, request } from '../../sim/replay/http-client.js';
import { fleetFigures } from '../../sim/replay/redis-figures.js';
import { CALIBRATED_KEYS } from '../../sim/scenario/calibration.js';
import { postText } from '../../sim/workload/history.js';
import { InfrastructureError } from '../errors.js';
import { serviceCliError } from '../service-command.js';
import { Watchdog } from '../replay/processes.js';
import { dropScratch, scratchNames } from '../replay/scratch.js';
import { connectServiceRedis, openServiceStore } from '../replay/services.js';
import { measureStoreCosts } from './costs.js';
import { recentPostToLog } from './post-to-log.js';
import { expectedSeconds, Steps } from './progress.js';
import { Contention, machine, versions } from './provenance.js';
import { DEFAULTS, type CalibrateHooks, type CalibrationRun } from './session.js';
import { CALIBRATE } from './settings.js';
import { workerStages } from './worker-stages.js';

export interface TargetInput {
  redisUrl: string;
  databaseUrl: string;
  samples: number;
  target: string;
  schema: string;
  streamPrefix: string;
  /** Its cache key prefix: where its workers publish their metrics. */
  keyPrefix: string;
}

/** Newest log entries read per partition for the post-to-log hop. */
const LOG_ENTRIES_PER_PARTITION = 200;

export async function calibrateTarget(input: TargetInput, hooks: CalibrateHooks): Promise<CalibrationRun> {
  try {
    return await run(input, hooks);
  } catch (err) {
    throw serviceCliError('calibrate', err, () => false);
  }
}

async function reachable(url: URL): Promise<void> {
  try {
    const conn = await KeepAliveConnection.open(url.hostname, Number(url.port || 80));
    try {
      const r = await request(conn, Buffer.from(`GET /healthz HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`, 'latin1'));
      if (r.status !== 200) throw new Error(`GET /healthz answered ${r.status}`);
    } finally {
      conn.close();
    }
  } catch (err) {
    throw new InfrastructureError(`calibrate: --target ${url.toString()} is unreachable: ${(err as Error).message}`);
  }
}

async function ids(store: Store, sql: string, values: unknown[]): Promise<number[]> {
  return (await store.pool.query<{ id: string }>(sql, values)).rows.map((r) => Number(r.id));
}

/** For each follower count of the fit, an author with about that many (half to twice). */
async function expansionAuthors(store: Store): Promise<number[]> {
  const out = new Set<number>();
  for (const c of CALIBRATE.world.expansionFollowers) {
    for (const id of await ids(store, 'SELECT id::text AS id FROM users WHERE follower_count BETWEEN $1 AND $2 ORDER BY follower_count, id LIMIT 1', [Math.ceil(c / 2), c * 2])) out.add(id);
  }
  return [...out];
}

/** Bodies for the first page of each of these timelines, cached under the scratch prefix (an MGET then hits). */
async function cacheFirstPages(redis: Redis, timelines: TimelineCache, bodies: PostBodyCache, readers: readonly number[], pageSize: number): Promise<void> {
  for (const u of readers) {
    const [slice] = await readSlices(redis, [{ key: timelines.key(u) }], { limit: pageSize });
    const entries = slice?.entries ?? [];
    await bodies.setMany(entries.map((e, i) => ({ id: e.id, body: { authorId: 0, text: postText(CALIBRATE.world.seed, 'target', i), createdAt: e.createdAt } })));
  }
}

async function run(input: TargetInput, hooks: CalibrateHooks): Promise<CalibrationRun> {
  const { log } = hooks;
  const url = new URL(input.target);
  await reachable(url);
  const steps = new Steps(expectedSeconds(input.samples, false), hooks.progress, log, { samples: input.samples, warmup: CALIBRATE.warmupRounds, signal: hooks.signal });
  const redis = await connectServiceRedis(input.redisUrl, 'feedlab-calibrate', 'calibrate');
  let store: Store | null = null;
  // keys only: its database is never made, and dropping it is a no-op
  const scratch = scratchNames(input.redisUrl, input.databaseUrl, 'calibrate');
  const watchdog = new Watchdog(null);
  watchdog.send({ scratch });
  const refused: Refusal[] = [];
  const apiWhy = "the server's CPU is read from its process on this machine (/proc), and a target's is not: calibrate the API tier self-contained";
  for (const key of CALIBRATED_KEYS) if (key.startsWith('api.') && key !== 'api.postListed') refused.push({ key, why: apiWhy, notMeasured: true });
  refused.push({ key: 'api.postListed', why: "a post's time to its author's list comes from the 201s of posts calibrate sends, and it posts nothing to a target: calibrate self-contained", notMeasured: true });
  try {
    store = await openServiceStore(input.databaseUrl, input.schema, 'feedlab-calibrate', 'calibrate');
    steps.begin('world', `picking authors and readers from ${input.schema}'s users (read only); lists of our own under ${scratch.keyPrefix} (removed at the end)`);
    const sc = DEFAULTS;
    const expansion = await expansionAuthors(store);
    const rebuildReaders = await ids(store, 'SELECT id::text AS id FROM users WHERE followee_count >= 10 ORDER BY id LIMIT $1', [CALIBRATE.rebuild.perSample * 2]);
    const eventAuthors = await ids(store, 'SELECT id::text AS id FROM users WHERE follower_count > 0 ORDER BY id LIMIT $1', [CALIBRATE.eventStatements.perSample]);
    if (expansion.length < 2 || rebuildReaders.length === 0 || eventAuthors.length === 0) {
      throw new InfrastructureError(`calibrate --target: ${input.schema}.users has too few authors and readers to measure on (${expansion.length} authors between 5 and 20,000 followers, ${rebuildReaders.length} readers following 10 or more)`);
    }
    steps.finish('world');
    const pgPort = Number(new URL(resolveDatabaseUrl(input.databaseUrl)).port || 5432);
    const contention = new Contention(redis, store, pgPort, new Map());
    await contention.start();
    const keys = keyspace(scratch.keyPrefix);
    const leaseMs = CALIBRATE.targetLeaseMs;
    const timelines = new TimelineCache(redis, keys, { cap: sc.policy.timelineCap, leaseMs, batchSize: Math.max(...CALIBRATE.timelineWrites.batchSizes) });
    const bodies = new PostBodyCache(redis, keys, { ttlMs: leaseMs });
    const writeTargets = Array.from({ length: Math.max(...CALIBRATE.timelineWrites.batchSizes) }, (_, i) => i);
    const pageReaders = writeTargets.slice(0, CALIBRATE.world.readersPerShape);
    const { costs, rebuiltEntries } = await measureStoreCosts(
      {
        redis,
        timelines,
        bodies,
        repo: new FeedRepository(store),
        writeTargets,
        pageReaders,
        pageSize: sc.activity.pageSize,
        renewOnRead: true,
        beforePageReads: () => cacheFirstPages(redis, timelines, bodies, pageReaders, sc.activity.pageSize),
        expansionAuthors: expansion,
        followerPage: sc.infrastructure.worker.followerPage,
        dormantMs: sc.policy.dormantDays * SECONDS_PER_DAY * 1000,
        eventAuthors,
        rebuildReaders,
        threshold: DEFAULT_CELEBRITY_THRESHOLD,
      },
      steps,
      refused,
    );
    steps.begin('post to log', `reading the newest entries of the event log ${input.streamPrefix}`);
    const partitions = Number(await redis.get(`${input.streamPrefix}:meta`));
    let postToLog = null;
    if (partitions > 0) postToLog = await recentPostToLog({ redis, streamPrefix: input.streamPrefix, partitions }, LOG_ENTRIES_PER_PARTITION);
    else refused.push({ key: 'postToLog', why: `no event log at --stream-prefix ${input.streamPrefix} (its ${input.streamPrefix}:meta key is missing)`, notMeasured: true });
    // its workers' own stages since they started (their published figures), when they publish them
    const worker = workerStages(await fleetFigures(redis, input.keyPrefix), 'deployment-workers');
    if (worker.pickup.n === 0) {
      refused.push({ key: 'costs.pickup', why: `no worker of the deployment publishes its events' stages under key prefix "${input.keyPrefix}" (--key-prefix; workers older than these figures do not)`, notMeasured: true });
    }
    const idleWhy = "a worker's stages by its idle time need posts at paces calibrate chooses, and it posts nothing to a target: calibrate self-contained";
    for (const key of IDLE_CURVE_KEYS) refused.push({ key, why: idleWhy, notMeasured: true });
    refused.push({ key: 'costs.eventWritesSpread', why: "how a post's writes scatter about their line needs posts of each size calibrate sends, and it posts nothing to a target: calibrate self-contained", notMeasured: true });
    const contended = await contention.stop();
    return {
      provenance: {
        machine: machine(),
        date: new Date().toISOString(),
        versions: await versions(redis, store),
        mode: 'target',
        target: url.toString(),
        contention: contended,
        samples: input.samples,
        world: {
          rows: `the deployment's (${input.schema}), read only`,
          expansionAuthors: expansion.length,
          rebuildReaders: rebuildReaders.length,
          rebuiltTimelineEntries: rebuiltEntries,
          eventAuthors: eventAuthors.length,
          threshold: `${DEFAULT_CELEBRITY_THRESHOLD} (the default; a rebuild leaves authors over it out)`,
        },
      },
      measurements: { ...costs, api: null, postToLog, worker: worker.pickup.n > 0 ? worker : null },
      refused,
    };
  } finally {
    try {
      const { keys } = await dropScratch(scratch);
      log(`removed ${keys} keys under ${scratch.keyPrefix}`);
      watchdog.release();
    } catch (err) {
      log((err as Error).message);
    }
    await store?.pool.end().catch(() => {});
    await closeRedis(redis).catch(() => {});
  }
}
