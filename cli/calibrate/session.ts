// A self-contained calibration, start to end, on replay's machinery: a scratch database, key prefix
// and event log of its own on this machine's Redis and Postgres (cli/replay/scratch.ts), the
// watchdog that removes them and stops the server if this process dies (processes.ts, reaper.ts),
// the calibration world loaded with COPY, `feedlab serve` started as its own process with the
// scenario defaults' timeline rules (stack.ts), every reader's cache warmed through the server
// (warm.ts), then every figure measured: the worker's costs first from here with the worker's own
// code, one batch at a time, with no fan-out worker running (it would only take CPU from the
// server's); then one `feedlab worker` for the hop's posts and the posts by size, whose own figures
// give what a running worker spends. Everything is stopped and removed whatever happened.
import { readPullThreshold } from '../../core/fanout-policy.js';
import { SECONDS_PER_DAY } from '../../core/timeline-rules.js';
import { closeRedis, keyspace } from '../../server/cache/redis.js';
import { PostBodyCache } from '../../server/cache/post-bodies.js';
import { TimelineCache } from '../../server/cache/timelines.js';
import type { CoreWait } from '../../sim/replay/core-wait.js';
import { DEFAULT_GROUP } from '../../server/worker/config.js';
import { probeDatabase, resolveDatabaseUrl, type Store } from '../../server/store/pool.js';
import { FeedRepository } from '../../server/store/repository.js';
import { PostgresOutbox } from '../../server/store/outbox.js';
import { IDLE_CURVE_KEYS, type Measurements, type Provenance, type Refusal, type StatementsByIdle, type WorkerBySize, type WorkerStages } from '../../sim/calibration/document.js';
import { policyFor } from '../../sim/run-scenario.js';
import { parseScenario } from '../../sim/scenario/load.js';
import { InfrastructureError } from '../errors.js';
import { serviceCliError } from '../service-command.js';
import { Watchdog } from '../replay/processes.js';
import { createScratchDatabase, dropScratch, scratchNames } from '../replay/scratch.js';
import { connectServiceRedis, openServiceStore } from '../replay/services.js';
import { REPLAY } from '../replay/settings.js';
import { startStack, startWorker, workerReady, type RunningStack } from '../replay/stack.js';
import { warmCaches } from '../replay/warm.js';
import { measureApi, measureWrites } from './api-costs.js';
import { measureStoreCosts } from './costs.js';
import { measurePostToLog } from './post-to-log.js';
import { expectedSeconds, Steps } from './progress.js';
import { Contention, machine, versions } from './provenance.js';
import { curvePaces, idleCurveOutOfReach, measureStatementsByIdle } from './statements-by-idle.js';
import { CALIBRATE } from './settings.js';
import { buildCalibrationWorld, loadCalibrationWorld, worldFigures, type CalibrationWorld } from './world.js';
import { measureWorkerBySize } from './worker-by-size.js';
import { WorkerStageProbe } from './worker-stages.js';

/** The hop's authors: small audiences, so the worker that takes their events is idle when they arrive. */
function hopAuthors(world: CalibrationWorld): number[] {
  return world.expansionAuthors.filter((a) => a.followers <= CALIBRATE.postToLog.maxFollowers).map((a) => a.id);
}

export interface CalibrateInput {
  redisUrl: string;
  databaseUrl: string;
  samples: number;
}

export interface CalibrateHooks {
  log: (line: string) => void;
  progress: (fraction: number, detail: string) => void;
  signal: AbortSignal;
}

export interface CalibrationRun {
  provenance: Provenance;
  measurements: Measurements;
  /** Figures that could not be measured here (more are refused when the document is built). */
  refused: Refusal[];
}

/** The scenario defaults the stack runs with (timeline cap, lease, dormancy, list length, threshold). */
export const DEFAULTS = parseScenario('name: calibrate\n', 'calibrate defaults');

export async function calibrateSelfContained(input: CalibrateInput, hooks: CalibrateHooks): Promise<CalibrationRun> {
  try {
    return await run(input, hooks);
  } catch (err) {
    throw serviceCliError('calibrate', err, () => false);
  }
}

async function run(input: CalibrateInput, hooks: CalibrateHooks): Promise<CalibrationRun> {
  const { log } = hooks;
  const steps = new Steps(expectedSeconds(input.samples, true), hooks.progress, log, { samples: input.samples, warmup: CALIBRATE.warmupRounds, signal: hooks.signal });
  const sc = DEFAULTS;
  const policy = policyFor(sc);
  // both reachable before anything is made
  const down = await probeDatabase(input.databaseUrl, 3_000);
  if (down) throw new InfrastructureError(`calibrate: ${down}`);
  const redis = await connectServiceRedis(input.redisUrl, 'feedlab-calibrate', 'calibrate');
  let store: Store | null = null;
  let stack: RunningStack | null = null;
  const scratch = scratchNames(input.redisUrl, input.databaseUrl, 'calibrate');
  const watchdog = new Watchdog(null);
  watchdog.send({ scratch });
  try {
    log(`scratch space: database ${scratch.database}, keys under ${scratch.keyPrefix} and ${scratch.streamPrefix} (removed at the end)`);
    await createScratchDatabase(scratch);
    store = await openServiceStore(scratch.databaseUrl, scratch.schema, 'feedlab-calibrate', 'calibrate');
    steps.begin('world', 'loading the calibration world and starting the server');
    const nowMs = Date.now();
    const world = buildCalibrationWorld(nowMs);
    const loaded = await loadCalibrationWorld(store, world, nowMs);
    const services = { redisUrl: input.redisUrl, databaseUrl: scratch.databaseUrl, schema: scratch.schema, keyPrefix: scratch.keyPrefix, streamPrefix: scratch.streamPrefix, partitions: REPLAY.partitions, group: DEFAULT_GROUP };
    const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64');
    stack = await startStack(services, sc, policy, 0, secret, watchdog);
    const server = stack.processes[0];
    log(`world: ${loaded.users.toLocaleString('en-US')} users, ${loaded.follows.toLocaleString('en-US')} follows, ${loaded.posts.toLocaleString('en-US')} posts (${loaded.seconds.toFixed(1)} s); server (pid ${server.pid}) up on http://${stack.host}:${stack.port}`);
    const readers = [...world.readersByPulled.values(), ...world.readersByQuiet.values()].flat();
    const pageSize = sc.activity.pageSize;
    // the hop's authors read too, as a replay's warm authors have: their own lists exist, so the
    // server times each post into its list (api.postListed), as it does a pulled author's
    const warmed = [...new Set([...readers, ...hopAuthors(world)])];
    await warmCaches({ host: stack.host, port: stack.port, token: stack.token, readers: Int32Array.from(warmed), dormantKept: [], pageSize, redis, store, keyPrefix: scratch.keyPrefix, scenario: sc, policy, signal: hooks.signal });
    steps.finish('world');

    const pgPort = Number(new URL(resolveDatabaseUrl(scratch.databaseUrl)).port || 5432);
    const contention = new Contention(redis, store, pgPort, new Map([['server', server.pid]]));
    await contention.start();
    const keys = keyspace(scratch.keyPrefix);
    const leaseMs = Math.round(sc.policy.leaseDays * SECONDS_PER_DAY * 1000);
    const timelines = new TimelineCache(redis, keys, { cap: sc.policy.timelineCap, leaseMs, batchSize: Math.max(...CALIBRATE.timelineWrites.batchSizes) });
    const repo = new FeedRepository(store);
    const refused: Refusal[] = [];
    const { costs, rebuiltEntries } = await measureStoreCosts(
      {
        redis,
        timelines,
        bodies: new PostBodyCache(redis, keys),
        repo,
        writeTargets: world.writeTargets,
        // readers who pull nobody: their first page is their timeline's, whose bodies the warm pass cached
        pageReaders: world.readersByPulled.get(0) ?? readers,
        pageSize,
        renewOnRead: true,
        expansionAuthors: world.expansionAuthors.map((a) => a.id),
        followerPage: sc.infrastructure.worker.followerPage,
        dormantMs: sc.policy.dormantDays * SECONDS_PER_DAY * 1000,
        eventAuthors: world.authors,
        rebuildReaders: readers,
        threshold: Math.min(readPullThreshold(policy), Number.MAX_SAFE_INTEGER),
      },
      steps,
      refused,
    );

    const target = { host: stack.host, port: stack.port, serverPid: server.pid, token: stack.token, readersByPulled: world.readersByPulled, readersByQuiet: world.readersByQuiet, authors: world.authors, seed: CALIBRATE.world.seed };
    const api = await measureApi(target, steps.begin('API CPU', "measuring the server's CPU per feed page by shape, the network hop and the service-time spread", 3));
    // one fan-out worker takes the hop's posts: its own figures give the stages of an event
    const worker = startWorker(services, sc, policy, 1, secret);
    watchdog.send({ pids: [...stack.processes, worker].map((p) => p.pid) });
    let workerStopped = false;
    const stopWorker = async () => {
      if (workerStopped) return;
      workerStopped = true;
      contention.passed(worker.pid);
      await worker.stop();
      watchdog.send({ pids: stack!.processes.map((p) => p.pid) });
    };
    let postToLog: Awaited<ReturnType<typeof measurePostToLog>>;
    let workerFigures: WorkerStages;
    let workerBySize: WorkerBySize;
    let statementsByIdle: StatementsByIdle | null;
    let coreWaits: Record<string, CoreWait>;
    try {
      await workerReady(worker);
      contention.passingStart(worker.pid);
      // how long the processes waited for a core while the running worker was measured: compare
      // sets them beside the replays' (the stages cross processes at every wake-up)
      const waits = await contention.watchWaits(new Map([['server', server.pid], ['worker', worker.pid]]));
      const outbox = new PostgresOutbox(store);
      const probe = new WorkerStageProbe({ redis, keyPrefix: scratch.keyPrefix, streamPrefix: scratch.streamPrefix, partitions: REPLAY.partitions, group: DEFAULT_GROUP, askToPublish: () => worker.askToPublish(), outboxBacklog: () => outbox.backlog() });
      postToLog = await measurePostToLog(
        { host: stack.host, port: stack.port, token: stack.token, authors: hopAuthors(world), log: { redis, streamPrefix: scratch.streamPrefix, partitions: REPLAY.partitions }, seed: CALIBRATE.world.seed },
        steps.begin('post to log', 'measuring the hop from a post to its event in the log, and a worker taking it'),
        () => probe.mark(),
      );
      workerFigures = await probe.since();
      if (!postToLog.listed) refused.push({ key: 'api.postListed', why: "the server's 201s carried no Server-Timing `listed` (a server older than the figure)", notMeasured: true });
      const paces = curvePaces();
      const outOfReach = idleCurveOutOfReach(input.samples);
      if (outOfReach === null) {
        const paceRounds = steps.begin('statements by idle', `measuring a running worker's statement after idle time (posts at ${paces.join(', ')} a second, the hop's ${CALIBRATE.postToLog.perSecond} the reference)`, 1, paces.length);
        statementsByIdle = await measureStatementsByIdle({
          host: stack.host,
          port: stack.port,
          token: stack.token,
          authors: hopAuthors(world),
          hopPerSecond: CALIBRATE.postToLog.perSecond,
          samples: input.samples,
          seed: CALIBRATE.world.seed,
          stagesSince: () => probe.since(),
          signal: hooks.signal,
          onPace: () => paceRounds.onRound?.(),
        });
      } else {
        statementsByIdle = null;
        for (const key of IDLE_CURVE_KEYS) refused.push({ key, why: outOfReach, notMeasured: true });
      }
      const sizes = world.workerBySizeAuthors;
      const sizeRounds = steps.begin('worker by size', `measuring a running worker's first page and writes by a post's followers (${sizes.map((a) => a.followers).join(', ')})`, 1, sizes.length);
      workerBySize = await measureWorkerBySize({
        host: stack.host,
        port: stack.port,
        token: stack.token,
        authors: sizes,
        samples: input.samples,
        secondsPerWrite: costs.timelineWrites.fit.slope,
        seed: CALIBRATE.world.seed,
        stagesSince: () => probe.since(),
        redis,
        signal: hooks.signal,
        onSize: () => sizeRounds.onRound?.(),
      });
      coreWaits = await waits.stop();
    } finally {
      await stopWorker();
    }
    const write = await measureWrites(target, steps.begin('API writes', "measuring the server's CPU per post"));
    const contended = await contention.stop();
    return {
      provenance: {
        machine: machine(),
        date: new Date().toISOString(),
        versions: await versions(redis, store),
        mode: 'self-contained',
        target: null,
        contention: contended,
        samples: input.samples,
        world: { ...worldFigures(world), rebuiltTimelineEntries: rebuiltEntries },
        coreWaits,
      },
      measurements: { ...costs, api: { ...api, write }, postToLog: postToLog.hop, postListed: postToLog.listed, worker: workerFigures, workerBySize, statementsByIdle },
      refused,
    };
  } finally {
    await stack?.stop().catch((err: unknown) => log(`stopping the server: ${(err as Error).message}`));
    try {
      const { keys } = await dropScratch(scratch);
      log(`removed the scratch database ${scratch.database} and ${keys} keys under ${scratch.keyPrefix} and ${scratch.streamPrefix}`);
      watchdog.release();
    } catch (err) {
      log((err as Error).message);
    }
    await store?.pool.end().catch(() => {});
    await closeRedis(redis).catch(() => {});
  }
}
