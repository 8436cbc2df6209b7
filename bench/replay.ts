// The replay benchmark (issue 10, "Benchmark"), in one run:
//
//  1. The open-model driver (sim/replay/driver.ts runSchedule) against the real stack, set up as
//     `feedlab replay` sets it up (cli/replay: buildWorld of a shipped scenario at its replay size, a
//     scratch space with the replay's watchdog, loadWorld, startStack, warmCaches). First the server's
//     closed-loop maximum read rate with our client and with autocannon (sim/replay/saturation.ts, the
//     loop `replay --max` runs), each with its client CPU per request; then open-model schedules at
//     50% and 90% of our figure: offered against achieved (the issue's anchor: within 1%), send
//     delay, latency from the intended and the actual send, late and dropped sends, the driver's CPU.
//  2. A shipped replay end to end, as a user runs it (`feedlab replay ... --json --quiet`, a child
//     process): its wall time and the figures its result document measured.
//
// Every measurement prints where the two cores went; the stack of part 1 is stopped and its scratch
// space removed before part 2, also when a step fails or the run is interrupted (SIGINT/SIGTERM).
import { spawn } from 'node:child_process';
import { Cleanup, f2, fmt, onSignals, verdict } from './harness.js';
import { benchEndToEnd } from './replay-end-to-end.js';
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import { formatPolicy } from '../core/fanout-policy.js';
import { Watchdog } from '../cli/replay/processes.js';
import { REPLAY } from '../cli/replay/settings.js';
import { createScratchDatabase, dropScratch, scratchNames } from '../cli/replay/scratch.js';
import { startStack, type RunningStack } from '../cli/replay/stack.js';
import { warmCaches } from '../cli/replay/warm.js';
import { buildWorld, keptTimelines, loadWorld } from '../cli/replay/world.js';
import { closeRedis, connectRedis, DEFAULT_REDIS_URL } from '../server/cache/redis.js';
import { createStore, DEFAULT_DATABASE_URL, probeDatabase, resolveDatabaseUrl } from '../server/store/pool.js';
import { DEFAULT_GROUP } from '../server/worker/config.js';
import { CpuMeter, formatCpu, waitForQuiet, type CpuShare } from '../sim/replay/cpu.js';
import { runSchedule, type DriverPlan, type DriverResult } from '../sim/replay/driver.js';
import { replayMapping } from '../sim/replay/mapping.js';
import { autocannonClosedLoop, ownClosedLoop, type SaturationFigure, type SaturationOptions } from '../sim/replay/saturation.js';
import { Rng } from '../core/random.js';
import { policyFor } from '../sim/run-scenario.js';
import { loadScenario } from '../sim/scenario/load.js';
import { postText } from '../sim/workload/history.js';
import { mean } from 'simple-statistics';

/** Part 1's world: 5,000 users, 5 stars merged on read, 2 workers (the scenario's replay section). */
const DRIVER_SCENARIO = 'scenarios/threshold-sweep.yaml';
const CLOSED_ROUNDS = 2;
const SHARES = [0.5, 0.9];
const OPEN_WARMUP_MS = 2_000;
const OPEN_MS = 8_000;
/** Posts among the open-model requests: Twitter 2012's 4.6k tweets/s against 300k timeline reads/s. */
const POST_SHARE = 0.015;
const TARGET_ACHIEVED = 0.99;
/** The two closed loops "agree" within this (the issue: they agree or the difference is explained). */
const AGREE = 0.1;
const QUIET_BUDGET_MS = 20_000;

const results: string[] = [];
const seenOther: number[] = [];

function cpuLine(c: CpuShare): string {
  seenOther.push(c.other);
  return formatCpu(c, 'driver');
}


export async function benchReplay(): Promise<void> {
  results.length = 0;
  seenOther.length = 0;
  const redisUrl = process.env.REDIS_URL ?? DEFAULT_REDIS_URL;
  const databaseUrl = process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  const pgDown = await probeDatabase(databaseUrl, 3_000);
  let redis: Redis;
  try {
    redis = await connectRedis({ url: redisUrl, connectionName: 'feedlab-bench-replay', commandTimeoutMs: 30_000 });
  } catch (err) {
    console.log(`!!! replay benchmark SKIPPED: Redis unreachable (${(err as Error).message}) !!!`);
    return;
  }
  if (pgDown) {
    await closeRedis(redis);
    console.log(`!!! replay benchmark SKIPPED: Postgres unreachable (${pgDown}) !!!`);
    return;
  }
  try {
    await benchDriver(redis, redisUrl, databaseUrl);
  } catch (err) {
    console.log(`  !!! the driver benchmark failed: ${(err as Error).stack ?? err}`);
  } finally {
    await closeRedis(redis).catch(() => {});
  }
  results.push(...(await benchEndToEnd()));
  const avgOther = seenOther.length > 0 ? mean(seenOther) : 0;
  console.log('summary:');
  console.log(
    `  machine: other processes took on average ${avgOther.toFixed(0)}% of the 200% during the ${seenOther.length} measurements of part 1 (max ${Math.max(0, ...seenOther).toFixed(0)}%)` +
      (avgOther > 25 ? ': !!! disturbed by other load on this 2-core machine !!!' : ''),
  );
  for (const r of results) console.log(`  RESULT ${r}`);
}

// ---- 1. the driver against the live stack ----

async function benchDriver(redis: Redis, redisUrl: string, databaseUrl: string): Promise<void> {
  const cleanup = new Cleanup();
  const off = onSignals(() => cleanup.runAll());
  try {
    const t0 = performance.now();
    const mapping = replayMapping(loadScenario(DRIVER_SCENARIO, { onIntervalNote: null }), {}, availableParallelism());
    const world = await buildWorld(mapping, undefined, availableParallelism());
    const sc = world.mapping.scenario;
    const policy = policyFor(sc);
    const scratch = scratchNames(redisUrl, databaseUrl);
    // The replay's own watchdog: the scratch space and processes go even if this process is killed.
    const watchdog = new Watchdog(null);
    watchdog.send({ scratch });
    cleanup.add(`remove scratch ${scratch.database}, ${scratch.keyPrefix}*`, async () => {
      await dropScratch(scratch);
      watchdog.release();
    });
    await createScratchDatabase(scratch);
    const store = createStore({ databaseUrl: scratch.databaseUrl, schema: scratch.schema, max: 8, applicationName: 'feedlab-bench-replay' });
    cleanup.add('close Postgres', () => store.pool.end());
    const loaded = await loadWorld(store, world, Date.now(), true);
    const services = { redisUrl, databaseUrl: scratch.databaseUrl, schema: scratch.schema, keyPrefix: scratch.keyPrefix, streamPrefix: scratch.streamPrefix, partitions: REPLAY.partitions, group: DEFAULT_GROUP };
    const stack: RunningStack = await startStack(services, sc, policy, mapping.workers.started, randomBytes(32).toString('hex'), watchdog);
    cleanup.add('stop the server and workers', () => stack.stop());
    const kept = keptTimelines(world, policy);
    const warm = await warmCaches({ host: stack.host, port: stack.port, token: stack.token, readers: kept.active, dormantKept: kept.dormantKept, pageSize: sc.activity.pageSize, redis, store, keyPrefix: scratch.keyPrefix, scenario: sc, policy });
    console.log(
      `world: ${DRIVER_SCENARIO} at its replay size: ${fmt(world.graph.users)} users, ${fmt(world.graph.edges)} follows, ${fmt(loaded.posts)} posts of the last ${sc.policy.leaseDays} days (loaded in ${loaded.seconds.toFixed(1)} s), ` +
        `policy ${formatPolicy(policy)}; server (pid ${stack.processes[0].pid}) and ${stack.workerNames.length} workers on ${stack.host}:${stack.port}; ` +
        `${fmt(warm.readers)} active readers warmed in ${warm.seconds.toFixed(1)} s; set up in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );

    const pgPort = Number(new URL(resolveDatabaseUrl(databaseUrl)).port || 5432);
    const cpu = new CpuMeter(redis, null, pgPort, async (ports) => {
      if (ports.length === 0) return [];
      const r = await store.pool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE client_port = ANY ($1::int[])', [ports]);
      return r.rows.map((row) => row.pid);
    });
    cpu.setProcesses(new Map(stack.processes.map((p) => [p.name, p.pid])));
    let quietBudget = QUIET_BUDGET_MS;
    const quiet = async () => {
      if (quietBudget <= 0) return;
      const r = await waitForQuiet(cpu, Math.min(quietBudget, 10_000));
      quietBudget -= Math.max(0, r.waitedMs - 600); // the sample itself is not waiting
    };

    // (a) the closed-loop maximum, both clients on the same reads, connections and durations
    const active = world.population.activeUsers;
    const path = `/v1/feed?limit=${sc.activity.pageSize}`;
    const sat: SaturationOptions = { host: stack.host, port: stack.port, reads: Array.from(active, (u) => ({ path, token: stack.token(u) })), connections: REPLAY.saturation.connections, warmupMs: REPLAY.saturation.warmupMs, durationMs: REPLAY.saturation.maxMs };
    console.log(
      `closed loop (what \`feedlab replay --max\` runs): first pages of the ${fmt(active.length)} warm readers in turn, ${sat.connections} keep-alive connections, ` +
        `${REPLAY.saturation.maxMs / 1000} s after ${REPLAY.saturation.warmupMs} ms of warm-up, ${CLOSED_ROUNDS} rounds in alternating order (the best of each is compared):`,
    );
    const best: Record<'feedlab' | 'autocannon', { fig: SaturationFigure; share: CpuShare } | null> = { feedlab: null, autocannon: null };
    for (let round = 0; round < CLOSED_ROUNDS; round++) {
      for (const tool of round % 2 === 0 ? (['feedlab', 'autocannon'] as const) : (['autocannon', 'feedlab'] as const)) {
        await quiet();
        const a = await cpu.snapshot();
        const fig = await (tool === 'feedlab' ? ownClosedLoop(sat) : autocannonClosedLoop(sat));
        const share = cpu.share(a, await cpu.snapshot());
        if (!best[tool] || fig.rate > best[tool]!.fig.rate) best[tool] = { fig, share };
        console.log(
          `  ${tool.padEnd(10)} ${fmt(fig.rate)} reads/s, p50 ${f2(fig.p50Ms, ' ms')}, p99 ${f2(fig.p99Ms, ' ms')}, ${fig.errors} errors, ${fig.non2xx} non-2xx; ` +
            `client cpu ${fmt(fig.clientCpuMicrosPerRequest)} µs/request; ${cpuLine(share)}`,
        );
      }
    }
    const own = best.feedlab!.fig;
    const ac = best.autocannon!.fig;
    const disturbed = best.feedlab!.share.other > 25 || best.autocannon!.share.other > 25 ? ' (!!! other processes busy: disturbed)' : '';
    // On two saturated cores, what a client burns comes out of the server's share.
    const core = (f: SaturationFigure) => `${((100 * f.clientCpuSeconds) / f.seconds).toFixed(0)}%`;
    const rateRatio = ac.rate / own.rate;
    const cpuRatio = own.clientCpuMicrosPerRequest / ac.clientCpuMicrosPerRequest;
    console.log(
      `  best: feedlab ${fmt(own.rate)} reads/s at ${fmt(own.clientCpuMicrosPerRequest)} µs client cpu/request; autocannon ${fmt(ac.rate)} reads/s at ${fmt(ac.clientCpuMicrosPerRequest)} µs/request ` +
        `(client cpu ${core(own)} and ${core(ac)} of a core, taken from the server's share of the two cores; autocannon's latency has 1 ms resolution; it counts every answer in its window, ours the 200s)`,
    );
    results.push(`replay closed loop: autocannon/feedlab max reads/s ${fmt(ac.rate)}/${fmt(own.rate)} = ${rateRatio.toFixed(2)} (agree within ±${AGREE * 100}%): ${Math.abs(rateRatio - 1) <= AGREE ? 'they agree' : 'THEY DIFFER'}${disturbed}`);
    results.push(`replay client cpu per request: feedlab ${fmt(own.clientCpuMicrosPerRequest)} µs / autocannon ${fmt(ac.clientCpuMicrosPerRequest)} µs = ${cpuRatio.toFixed(2)} (below 1: ours is cheaper)${disturbed}`);

    // (b) the open model at shares of our maximum
    const authors = world.schedule.posts.author;
    console.log(
      `open model (sim/replay/driver.ts): Poisson arrivals at a share of ${fmt(own.rate)}/s, ${(POST_SHARE * 100).toFixed(1)}% of them posts (authors as the scenario's schedule draws them), ` +
        `the rest first pages of uniformly drawn warm readers; ${OPEN_MS / 1000} s measured after ${OPEN_WARMUP_MS / 1000} s at the same rate; latency of 2xx answers:`,
    );
    for (const share of SHARES) {
      const rate = own.rate * share;
      await quiet();
      await runSchedule(openPlan(stack, sc.activity.pageSize, rate, OPEN_WARMUP_MS, active, authors, sc.seed + 1));
      const plan = openPlan(stack, sc.activity.pageSize, rate, OPEN_MS, active, authors, sc.seed);
      const a = await cpu.snapshot();
      const r = await runSchedule(plan);
      const c = cpu.share(a, await cpu.snapshot());
      openLine(share, rate, plan, r, c);
    }
    await driverAlone(own.rate, sc.activity.pageSize, active, authors, sc.seed, stack.token, cpu);
  } finally {
    off();
    await cleanup.runAll();
  }
}

/** The same open-model schedules against a stand-in that answers at once: what the driver alone keeps up with. */
async function driverAlone(max: number, pageSize: number, readers: Int32Array, authors: Int32Array, seed: number, token: (u: number) => string, cpu: CpuMeter): Promise<void> {
  const child = spawn(process.execPath, [join(dirname(fileURLToPath(import.meta.url)), 'feed-stand-in.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.stdout!.setEncoding('utf8').once('data', (d: string) => resolve(Number(/listening (\d+)/.exec(d)?.[1])));
      child.once('exit', () => reject(new Error('the stand-in exited')));
    });
    cpu.setProcesses(new Map([['stand-in', child.pid!]]));
    const stand = { host: '127.0.0.1', port, token };
    console.log(`the driver alone: the same schedules against a stand-in that answers at once (bench/feed-stand-in.ts, its own process):`);
    for (const share of SHARES) {
      const rate = max * share;
      await runSchedule(openPlan(stand, pageSize, rate, OPEN_WARMUP_MS, readers, authors, seed + 1));
      const plan = openPlan(stand, pageSize, rate, OPEN_MS, readers, authors, seed);
      const a = await cpu.snapshot();
      const r = await runSchedule(plan);
      openLine(share, rate, plan, r, cpu.share(a, await cpu.snapshot()), 'driver alone');
    }
  } finally {
    child.kill('SIGTERM');
  }
}

function openPlan(stack: Pick<RunningStack, 'host' | 'port' | 'token'>, pageSize: number, rate: number, ms: number, readers: Int32Array, authors: Int32Array, seed: number): DriverPlan {
  const rng = Rng.derive(seed, `bench-open-${Math.round(rate)}-${ms}`);
  const [postAt, postAuthor, readAt, readUser]: number[][] = [[], [], [], []];
  for (let t = rng.exponential(rate / 1000); t < ms; t += rng.exponential(rate / 1000)) {
    if (rng.float() < POST_SHARE && authors.length > 0) {
      postAt.push(t);
      postAuthor.push(authors[rng.int(authors.length)]);
    } else {
      readAt.push(t);
      readUser.push(readers[rng.int(readers.length)]);
    }
  }
  return {
    host: stack.host,
    port: stack.port,
    posts: { atMs: Float64Array.from(postAt), author: Int32Array.from(postAuthor), burst: new Uint8Array(postAt.length) },
    sessions: { atMs: Float64Array.from(readAt), user: Int32Array.from(readUser), pages: new Uint16Array(readAt.length).fill(1) },
    pageSize,
    token: stack.token,
    postText: (i) => postText(seed, 'bench', i),
    maxConnections: 256,
    preopen: 64,
    dropAfterMs: 10_000,
    drainMs: 10_000,
    intervalMs: 1_000,
  };
}

function openLine(share: number, rate: number, plan: DriverPlan, r: DriverResult, c: CpuShare, what = 'replay driver'): void {
  const seconds = OPEN_MS / 1000;
  const offered = plan.posts.atMs.length + plan.sessions.atMs.length;
  // answered within the scheduled span (what the server kept up with), against what was offered in it
  const inWindow = r.intervals.filter((b) => b.endMs <= OPEN_MS + 1e-6).reduce((s, b) => s + b.reads.completed + b.posts.completed, 0);
  const ratio = inWindow / offered;
  const t = r.totals;
  const late = (k: typeof t.reads) => k.lateGenerator + k.lateNoConnection;
  const failed = (k: typeof t.reads) => k.status4xx + k.status429 + k.status5xx + k.status503 + k.statusOther + k.networkErrors + k.timeouts;
  const L = r.latency;
  const pctShare = `${(share * 100).toFixed(0)}%`;
  console.log(
    `  ${pctShare} (${fmt(rate)}/s nominal): offered ${fmt(offered / seconds)}/s (${fmt(t.reads.offered)} reads, ${fmt(t.posts.offered)} posts), achieved ${fmt(inWindow / seconds)}/s = ${ratio.toFixed(3)}; ` +
      `${fmt(t.reads.completed + t.posts.completed)}/${fmt(offered)} answered 2xx by the end, ${failed(t.reads) + failed(t.posts)} failed${r.firstError ? ` (${r.firstError})` : ''}`,
  );
  console.log(
    `    send delay p50 ${f2(L.sendDelay.p50Ms, ' ms')}, p99 ${f2(L.sendDelay.p99Ms, ' ms')}, max ${f2(L.sendDelay.maxMs, ' ms')}; late (> 1 ms) ${fmt(late(t.reads) + late(t.posts))} ` +
      `(${fmt(t.reads.lateGenerator + t.posts.lateGenerator)} driver behind, ${fmt(t.reads.lateNoConnection + t.posts.lateNoConnection)} no free connection), dropped ${fmt(t.reads.dropped + t.posts.dropped)}; ` +
      `${r.connections.opened} connections opened (at most ${r.connections.peak} open at once), at most ${r.connections.maxQueued} waiting`,
  );
  console.log(
    `    reads: from intended send p50 ${f2(L.reads.fromIntended.p50Ms, ' ms')}, p99 ${f2(L.reads.fromIntended.p99Ms, ' ms')}; from actual send p50 ${f2(L.reads.fromSent.p50Ms, ' ms')}, p99 ${f2(L.reads.fromSent.p99Ms, ' ms')}; ` +
      `posts: p50 ${f2(L.posts.fromIntended.p50Ms, ' ms')}, p99 ${f2(L.posts.fromIntended.p99Ms, ' ms')}`,
  );
  console.log(
    `    driver cpu ${fmt(r.driver.cpuMicrosPerRequest)} µs/request (${(r.driver.cpuSeconds / (r.wallMs / 1000) * 100).toFixed(0)}% of a core), event-loop delay p99 ${f2(r.driver.loopDelayP99Ms, ' ms')}; ${cpuLine(c)}`,
  );
  const busy = c.other > 25 ? ' (!!! other processes busy: disturbed)' : '';
  // every connection busy and requests queued for one: the server's answers, not the sends, fell behind
  const why = ratio < TARGET_ACHIEVED && r.connections.peak >= r.connections.max && t.reads.lateNoConnection + t.posts.lateNoConnection > 0 ? ` (the server fell behind: all ${r.connections.max} connections busy, from-send p99 ${f2(L.reads.fromSent.p99Ms, ' ms')})` : '';
  results.push(`${what}: achieved/offered ${ratio.toFixed(3)} at ${pctShare} of the max (target >= ${TARGET_ACHIEVED}): ${verdict(ratio >= TARGET_ACHIEVED)}${why}${busy}`);
  results.push(`${what}: send delay p99 ${f2(L.sendDelay.p99Ms, ' ms')} at ${pctShare}, ${fmt(late(t.reads) + late(t.posts))} late, ${fmt(t.reads.dropped + t.posts.dropped)} dropped; ${fmt(r.driver.cpuMicrosPerRequest)} µs driver cpu/request`);
}

if (import.meta.url === `file://${process.argv[1]}`) await benchReplay();
