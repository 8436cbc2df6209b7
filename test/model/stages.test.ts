// The model's stages around the worker pool, each against its closed form: the hop through the
// outbox relay and the event log, the worker's statements and follower pages, a whole post on one
// worker, the API tier (its fixed costs, its M/D/1 queue, its automatic size) and shared cores.
import { describe, expect, it } from 'vitest';
import { buildPopulation } from '../../sim/model/population.js';
import { erlangC, slowdownAt } from '../../sim/model/machine.js';
import { simulate } from '../../sim/model/simulation.js';
import { basePolicy } from '../../sim/policy.js';
import { constantDistribution, quantileAt, quantileMean } from '../../sim/scenario/quantiles.js';
import { bipartiteGraph, scenarioFrom, starGraph } from './fixtures.js';

const quiet = `
activity:
  postsPerUserPerDay: 0
  sessionsPerUserPerDay: 0
  dormantShare: 0
  diurnal: none
`;

/** One burst post by the star of `followers` followers, on 10 workers writing 5,000/s each (push, no API tier, unless given). */
function burst(followers: number, infra: string, o: { policy?: string; api?: string } = {}) {
  const sc = scenarioFrom(`duration: 2m
${quiet}
events:
  - at: 10s
    celebrityBurst: { accounts: 1, window: 1ms }
infrastructure:
  fanoutWorkers: 10
  writesPerSecondPerWorker: 5000
  batchSize: 1000
  api: ${o.api ?? 'none'}
${infra}
policy: ${o.policy ?? '{ kind: push, skipDormant: false }'}
`, followers + 1);
  const graph = starGraph(followers);
  return simulate({ scenario: sc, population: buildPopulation(graph, sc), policy: basePolicy(sc) });
}

const NO_COSTS = '  costs: { rtt: 0s, expand: 0s, expandPerFollower: 0s, eventStatements: 0s }';

describe('the write path before the workers', () => {
  it('adds the hop through the outbox relay and the event log to every lag', () => {
    const without = burst(1000, `${NO_COSTS}\n  postToLog: 0s`);
    const withHop = burst(1000, `${NO_COSTS}\n  postToLog: 10ms`);
    expect(without.fanout.postLag.max).toBeCloseTo(1000 / 5000, 9);
    expect(withHop.fanout.postLag.max).toBeCloseTo(0.01 + 1000 / 5000, 9);
  });

  it("adds the worker's statements and its first page of followers: 3 ms + 1 ms + 1,000 x 2 us", () => {
    const m = burst(1000, '  costs: { rtt: 0s, expand: 1ms, expandPerFollower: 2us, eventStatements: 3ms }\n  postToLog: 0s');
    expect(m.fanout.postLag.max).toBeCloseTo(0.003 + 0.001 + 0.002 + 0.2, 9);
    // the event holds its partition for as long
    expect(m.fanout.partitionUtilisation * 64 * 120).toBeCloseTo(0.006, 9);
  });

  it('reads one page of followers up front: a 30,000-follower post pays for the first 10,000 only', () => {
    const m = burst(30_000, '  costs: { rtt: 0s, expand: 1ms, expandPerFollower: 2us, eventStatements: 0s }\n  postToLog: 0s');
    // shared by the fleet: 30 batches over 10 workers, 3 each of 0.2 s
    expect(m.fanout.postLag.max).toBeCloseTo(0.001 + 10_000 * 2e-6 + 0.6, 9);
  });
});

describe('a whole post on one worker (worker.splitPosts: false, the reference worker)', () => {
  it('takes writes / rate plus a round trip per pipelines batches: 100k followers in 20.05 s, not the fleet\'s 2.01 s', () => {
    const costs = '  costs: { rtt: 1ms, expand: 0s, expandPerFollower: 0s, eventStatements: 0s, pickup: 0s }\n  postToLog: 0s';
    const whole = burst(100_000, `${costs}\n  worker: { splitPosts: false, pipelines: 2 }`);
    const shared = burst(100_000, `${costs}\n  worker: { splitPosts: true }`);
    // the first page is read beside the list write: max(rtt, expand) = 1 ms before the writes
    expect(whole.fanout.postLag.max).toBeCloseTo(0.001 + 50 * 0.001 + 100_000 / 5000, 9);
    expect(shared.fanout.postLag.max).toBeCloseTo(0.001 + 10 * (0.001 + 1000 / 5000), 9);
    // batch i ends at (i+1)/2 round trips (rounded up) and (i+1) x 1,000 writes: the mean follower waits about half
    expect(whole.fanout.followerLag.mean).toBeCloseTo(0.001 + 0.0255 + 10.1, 3);
    expect(whole.fanout.deliveries).toBe(100_000);
  });

  it('adds the pickup of an idle consumer, and reports each stage as the workers do: 5 + 0.5 + 3 + (1 + 2) ms, then the writes', () => {
    const m = burst(1000, '  costs: { rtt: 0s, expand: 1ms, expandPerFollower: 2us, eventStatements: 3ms, pickup: 0.5ms }\n  postToLog: 5ms\n  worker: { splitPosts: false }');
    expect(m.fanout.postLag.max).toBeCloseTo(0.005 + 0.0005 + 0.003 + 0.003 + 1000 / 5000, 9);
    const st = m.fanout.stages;
    expect(st.postToLog.mean).toBeCloseTo(0.005, 9);
    expect(st.pickup.mean).toBeCloseTo(0.0005, 9);
    expect(st.statements.mean).toBeCloseTo(0.003, 9);
    expect(st.firstPage.mean).toBeCloseTo(0.003, 9);
    expect(st.writes.mean).toBeCloseTo(1000 / 5000, 9);
    expect(st.writes.count).toBe(1);
  });
});

const reads = (infra: string, sessionsPerUserPerDay: number, duration = '1h', pageSize = 20) =>
  scenarioFrom(`duration: ${duration}
activity:
  postsPerUserPerDay: 0
  sessionsPerUserPerDay: ${sessionsPerUserPerDay}
  pagesPerSession: 1
  pageSize: ${pageSize}
  dormantShare: 0
  diurnal: none
infrastructure:
  redisShards: 8
${infra}
policy: { kind: push }
`, 1000);

describe('the API tier', () => {
  const graph = bipartiteGraph(995, 5);

  it('adds the network hop and the CPU of a page: 0.2 + 0.3 + 2 x 0.02 + 20 x 0.01 ms before Redis', () => {
    const sc = reads(`  costs: { rtt: 0.3ms, zrange: 15us, mgetPerKey: 2us }
  api: { instances: 50, network: 0.2ms, cpuPerRead: 300us, cpuPerList: 20us, cpuPerPost: 10us }`, 10);
    const m = simulate({ scenario: sc, population: buildPopulation(graph, sc), policy: basePolicy(sc) });
    expect(m.reads.latency.p50).toBeCloseTo(0.0002 + 0.0003 + 2 * 0.00002 + 20 * 0.00001 + 0.00067, 6);
    expect(m.api).toEqual({ instances: 50, servers: 50, utilisation: expect.any(Number), cpuCores: expect.any(Number) });
  });

  it('charges a list per entry only for what it holds: empty timelines and own lists cost their fixed part alone', () => {
    // nobody posts: every list a page reads is empty, so 1 ms a returned entry adds nothing
    const sc = reads(`  costs: { rtt: 0.3ms, zrange: 15us, zrangePerEntry: 1ms, mgetPerKey: 2us }
  api: { instances: 50, network: 0.2ms, cpuPerRead: 300us, cpuPerList: 20us, cpuPerListEntry: 1ms, cpuPerPost: 10us }`, 10);
    const m = simulate({ scenario: sc, population: buildPopulation(graph, sc), policy: basePolicy(sc) });
    expect(m.reads.latency.p50).toBeCloseTo(0.0002 + 0.0003 + 2 * 0.00002 + 20 * 0.00001 + 0.00067, 6);
  });

  it('queues as M/D/1 on one core: Poisson pages at 70% of its rate wait rho D / (2 (1 - rho)), then rho D / 3 at each of two resumptions, within 5%', () => {
    // 1,000 users x 6,048 sessions a day = 70 pages/s; 10 ms of CPU each on one core: rho 0.7
    const sc = reads(`  costs: { rtt: 0s, zrange: 0s, mgetPerKey: 0s }
  api: { instances: 1, network: 0s, cpuPerRead: 10ms, cpuPerList: 0s, cpuPerPost: 0s }`, 6048);
    const m = simulate({ scenario: sc, population: buildPopulation(graph, sc), policy: basePolicy(sc) });
    const D = 0.01;
    const rho = 0.7;
    // after each of its two Redis round trips the handler finds the loop busy (rho) with the rest of one of a request's three runs (mean D / 3)
    const expected = (rho * D) / (2 * (1 - rho)) + D + (2 * rho * D) / 3;
    expect(Math.abs(m.reads.latency.mean - expected) / expected).toBeLessThan(0.05);
    expect(Math.abs(m.api!.utilisation - rho)).toBeLessThan(0.02);
  });

  it('resumes a page after each round trip behind what its event loop runs: the chance its busy share, the rest of a third of a request', () => {
    // 1 ms pages on one core at 100 and 500 a second: each resumption waits with that chance, exponential of mean 1/3 ms
    for (const [sessions, rho] of [[8640, 0.1], [43200, 0.5]] as const) {
      const sc = reads(`  costs: { rtt: 0s, zrange: 0s, mgetPerKey: 0s }
  api: { instances: 1, network: 0s, cpuPerRead: 1ms, cpuPerList: 0s, cpuPerPost: 0s }`, sessions);
      const m = simulate({ scenario: sc, population: buildPopulation(graph, sc), policy: basePolicy(sc) });
      const D = 0.001;
      const expected = (rho * D) / (2 * (1 - rho)) + D + (2 * rho * D) / 3;
      expect(Math.abs(m.reads.latency.mean - expected) / expected, `rho ${rho}`).toBeLessThan(0.05);
      // a whole request's rest at each would be another figure: the test tells them apart at rho 0.5
      if (rho === 0.5) expect(Math.abs(m.reads.latency.mean - ((rho * D) / (2 * (1 - rho)) + D + 2 * rho * D)) / expected).toBeGreaterThan(0.1);
    }
    // on a tier of 50 processes nothing waits: the median is the page's own time
    const idle = reads(`  costs: { rtt: 0s, zrange: 0s, mgetPerKey: 0s }
  api: { instances: 50, network: 0s, cpuPerRead: 1ms, cpuPerList: 0s, cpuPerPost: 0s }`, 864);
    expect(simulate({ scenario: idle, population: buildPopulation(graph, idle), policy: basePolicy(idle) }).reads.latency.p50).toBeCloseTo(0.001, 6);
  });

  it('sized automatically, it is 50% busy at the peak', () => {
    const sc = reads('  api: { cpuPerRead: 10ms, cpuPerList: 0s, cpuPerPost: 0s, coresPerInstance: 2 }', 6048, '10m');
    const m = simulate({ scenario: sc, population: buildPopulation(graph, sc), policy: basePolicy(sc) });
    // 70 pages/s x 10 ms = 0.7 cores, at 50% on 2-core processes: one process
    expect(m.api!.instances).toBe(1);
    expect(m.api!.servers).toBe(2);
    expect(Math.abs(m.api!.utilisation - 0.35)).toBeLessThan(0.03);
  });

  it('adds the cost of finding the tier idle in full at a trickle, and less as its core gets busy', () => {
    const api = (idle: string) => `  costs: { rtt: 0s, zrange: 0s, mgetPerKey: 0s }\n  api: { instances: 1, network: 0s, cpuPerRead: 10ms, cpuPerList: 0s, cpuPerPost: 0s, idleOverhead: ${idle} }`;
    const run = (idle: string, sessions: number) => {
      const sc = reads(api(idle), sessions);
      return simulate({ scenario: sc, population: buildPopulation(graph, sc), policy: basePolicy(sc) });
    };
    // a trickle (10 pages/s, 10% busy): each page 10 ms of CPU and, its core idle the second before, most of 2 ms more
    const trickle = run('2ms', 864).reads.latency.mean - run('0s', 864).reads.latency.mean;
    expect(trickle).toBeGreaterThan(0.9 * 0.002 * 0.85);
    expect(trickle).toBeLessThan(0.002);
    // 70 pages/s on one core, 70% busy: about 30% of it (the queue's own wait is the same both ways)
    const busy = run('2ms', 6048).reads.latency.mean - run('0s', 6048).reads.latency.mean;
    expect(busy).toBeGreaterThan(0.002 * 0.2);
    expect(busy).toBeLessThan(0.002 * 0.45);
  });

  it('sized automatically, it counts the idle CPU a request still pays at 50% busy, and every process\'s background', () => {
    const sized = (idle: string, extra = '') => {
      const sc = reads(`  api: { cpuPerRead: 10ms, cpuPerList: 0s, cpuPerPost: 0s, coresPerInstance: 1, idleOverhead: ${idle}${extra} }`, 6048, '10m');
      return simulate({ scenario: sc, population: buildPopulation(graph, sc), policy: basePolicy(sc) }).api!;
    };
    // 70 pages/s x 10 ms = 0.7 cores at 50%: 2 processes
    expect(sized('16ms').instances).toBe(2);
    // 16 ms of idle CPU, half of it paid at 50% busy: 70 x 18 ms = 1.26 cores, 3 processes; an
    // idleOverhead of 8 ms holds it to 8 ms (70 x 14 ms = 0.98 cores: 2)
    expect(sized('16ms', ', idleCpu: 16ms').instances).toBe(3);
    expect(sized('8ms', ', idleCpu: 16ms').instances).toBe(2);
    // 0.2 cores of background each: 0.98 / 0.3, 4
    expect(sized('8ms', ', idleCpu: 16ms, backgroundCpu: 0.2').instances).toBe(4);
    expect(() => sized('0s', ', backgroundCpu: 0.5')).toThrow(/infrastructure\.api\.backgroundCpu 0\.5 leaves an API process nothing of the 50% of its 1 cores it is sized to be busy: give instances, or a smaller backgroundCpu/);
  });

  it("holds the core for idleCpu's share of the idle cost: the tier's utilisation counts it, and reads queue behind it", () => {
    const api = (cpu: string) => `  costs: { rtt: 0s, zrange: 0s, mgetPerKey: 0s }\n  api: { instances: 1, network: 0s, cpuPerRead: 10ms, cpuPerList: 0s, cpuPerPost: 0s, idleOverhead: 2ms, idleCpu: ${cpu} }`;
    const run = (cpu: string, sessions: number) => {
      const sc = reads(api(cpu), sessions);
      return simulate({ scenario: sc, population: buildPopulation(graph, sc), policy: basePolicy(sc) });
    };
    // 10 pages/s of 10 ms: u = 0.1 + 10 x 2 ms x (1 - u) at the fixed point, u = 0.12 / 1.02; waiting holds no core
    expect(run('0s', 864).api!.utilisation).toBeCloseTo(0.1, 2);
    expect(run('2ms', 864).api!.utilisation).toBeCloseTo(0.12 / 1.02, 2);
    // 70 pages/s: u = 0.84 / 1.14; the page waits no less in all, and its queue grows
    const held = run('2ms', 6048);
    const waiting = run('0s', 6048);
    expect(held.api!.utilisation).toBeCloseTo(0.84 / 1.14, 2);
    expect(held.reads.latency.p99).toBeGreaterThan(1.1 * waiting.reads.latency.p99);
    // a process's background (its timers, the relay's polls) counts in its CPU and utilisation
    const quiet = reads(api('0s').replace('idleOverhead: 2ms', 'idleOverhead: 0s, backgroundCpu: 0.05'), 864);
    const m = simulate({ scenario: quiet, population: buildPopulation(graph, quiet), policy: basePolicy(quiet) }).api!;
    expect(m.utilisation).toBeCloseTo(0.15, 2);
    expect(m.cpuCores).toBeCloseTo(0.15, 2);
    // more idle CPU than idle cost counts as all of it
    const over = reads(api('3ms'), 864);
    expect(simulate({ scenario: over, population: buildPopulation(graph, over), policy: basePolicy(over) }).api!.utilisation).toBeCloseTo(0.12 / 1.02, 2);
  });

  it("delivers a pulled post when its author's list holds it: api.postListed's draw, the CPU at least, a round trip without the tier", () => {
    const pulled = (api: string) => burst(1000, `${NO_COSTS.replace('rtt: 0s', 'rtt: 0.3ms')}\n  postToLog: 5ms`, { policy: '{ kind: pull }', api }).fanout;
    // the commit and the list add the server timed, not the hop to the log (a pulled post waits for no worker)
    const listed = pulled('{ instances: 1, network: 0s, cpuPerWrite: 500us, postListed: 4ms }');
    expect(listed.followerLag.mean).toBeCloseTo(0.004, 9);
    expect(listed.followerLag.count).toBe(1000);
    expect(listed.postLag.max).toBeCloseTo(0.004, 9);
    // a draw under the post's CPU: the handler is not done before its CPU is
    expect(pulled('{ instances: 1, network: 0s, cpuPerWrite: 500us, postListed: 100us }').followerLag.mean).toBeCloseTo(0.0005, 9);
    // a distribution is drawn per post
    const drawn = pulled('{ instances: 1, network: 0s, cpuPerWrite: 0s, postListed: { min: 1ms, max: 9ms } }').postLag;
    expect(drawn.max).toBeGreaterThanOrEqual(0.001);
    expect(drawn.max).toBeLessThanOrEqual(0.009);
    expect(pulled('none').followerLag.mean).toBeCloseTo(0.0003, 9);
  });

  it("meets a page's stalls as often as its work: at 4x the reference page's CPU, the mean 3 stalls' worth up, the median where it was", () => {
    // every request at its mean, but above the spread's p98 a stall rising to 6x (mean 1.075)
    const run = (pageSize: number) => {
      const sc = reads(`  costs: { rtt: 0s, zrange: 0s, mgetPerKey: 0s }
  api: { instances: 50, network: 0s, cpuPerRead: 0s, cpuPerList: 0s, cpuPerPost: 100us, spread: { min: 1, p98: 1, p99: 6, max: 6 } }`, 864, '1h', pageSize);
      return simulate({ scenario: sc, population: buildPopulation(graph, sc), policy: basePolicy(sc) }).reads.latency;
    };
    const reference = 0.002; // the reference page: 20 posts at 100 us, all it costs
    const body = (cpu: number) => cpu + (1 / 1.075 - 1) * reference;
    const one = run(20);
    expect(one.mean).toBeCloseTo(reference, 4);
    expect(one.p50).toBeCloseTo(body(0.002), 4);
    // 80 posts: 4x the CPU, one draw whole and 3 for their stall alone: E[max(0, q - 1)] = 0.01 x 2.5 + 0.01 x 5
    const four = run(80);
    expect(four.mean).toBeCloseTo(0.008 + (3 * 0.075 * reference) / 1.075, 4);
    expect(four.p50).toBeCloseTo(body(0.008), 4);
    // a stall in 1 - 0.98^4 = 7.8% of them, against 2%: both p90s at the body, the heavier p99 a stall
    expect(four.p90).toBeCloseTo(body(0.008), 4);
    expect(four.p99 - body(0.008)).toBeGreaterThan((0.5 * 5 * reference) / 1.075);
  });

  it('is absent with api: none: a page is its Redis work only', () => {
    const sc = reads('  costs: { rtt: 0.3ms, zrange: 15us, mgetPerKey: 2us }\n  api: none', 10);
    const m = simulate({ scenario: sc, population: buildPopulation(graph, sc), policy: basePolicy(sc) });
    expect(m.api).toBeNull();
    expect(m.reads.latency.p50).toBeCloseTo(0.00067, 6);
  });
});

describe('shared cores', () => {
  it('Erlang C and the M/M/c mean time: C(1, rho) = rho, C(2, 0.5) = 1/3, M/M/1 at 0.5 doubles the time', () => {
    expect(erlangC(1, 0.3)).toBeCloseTo(0.3, 12);
    expect(erlangC(2, 0.5)).toBeCloseTo(1 / 3, 12);
    expect(slowdownAt(1, 0.5)).toBeCloseTo(2, 12);
    expect(slowdownAt(2, 0.5)).toBeCloseTo(1 + 1 / 3, 12);
    expect(slowdownAt(4, 0)).toBe(1);
  });

  it('slows the API when the services crowd the cores they share', () => {
    const graph = bipartiteGraph(995, 5);
    const api = '  api: { instances: 4, network: 0s, cpuPerRead: 10ms, cpuPerList: 0s, cpuPerPost: 0s }\n  costs: { rtt: 0s, zrange: 0s, mgetPerKey: 0s }';
    const own = reads(api, 6048);
    const shared = reads(`${api}\n  cores: 1`, 6048);
    const a = simulate({ scenario: own, population: buildPopulation(graph, own), policy: basePolicy(own) });
    const b = simulate({ scenario: shared, population: buildPopulation(graph, shared), policy: basePolicy(shared) });
    // 0.7 cores of API work on one shared core: M/M/1 at 0.7 is 3.33x the service time
    expect(b.sharedCores!.peakUtilisation).toBeGreaterThan(0.6);
    expect(b.reads.latency.mean / a.reads.latency.mean).toBeGreaterThan(2.5);
    expect(a.sharedCores).toBeNull();
  });
});

describe('quantile distributions', () => {
  const d = { points: [{ p: 0, value: 1 }, { p: 0.5, value: 6 }, { p: 0.99, value: 35 }, { p: 1, value: 100 }] };

  it('interpolate between the written quantiles and hold their mean', () => {
    expect(quantileAt(d, 0.5)).toBe(6);
    expect(quantileAt(d, 0.25)).toBeCloseTo(3.5, 12);
    expect(quantileAt(d, 0.995)).toBeCloseTo(67.5, 9);
    expect(quantileMean(d)).toBeCloseTo(0.5 * 3.5 + 0.49 * 20.5 + 0.01 * 67.5, 12);
    expect(quantileMean(constantDistribution(4))).toBe(4);
  });

  it("the hop's draws average the distribution's mean", () => {
    // 100 authors with one follower each post about 5,000 times in the hour; a write takes 0.2 ms
    const sc = scenarioFrom(`duration: 1h
activity: { postsPerUserPerDay: 1188, sessionsPerUserPerDay: 0, dormantShare: 0, diurnal: none }
infrastructure:
  fanoutWorkers: 10
  writesPerSecondPerWorker: 5000
  api: none
${NO_COSTS}
  postToLog: { min: 1ms, p50: 6ms, p99: 35ms, max: 100ms }
policy: { kind: push, skipDormant: false }
`, 101);
    const graph = bipartiteGraph(1, 100);
    const m = simulate({ scenario: sc, population: buildPopulation(graph, sc), policy: basePolicy(sc) });
    const hops = { points: [{ p: 0, value: 0.001 }, { p: 0.5, value: 0.006 }, { p: 0.99, value: 0.035 }, { p: 1, value: 0.1 }] };
    expect(m.fanout.postLag.count).toBeGreaterThan(4000);
    expect(Math.abs(m.fanout.postLag.mean - 0.0002 - quantileMean(hops)) / quantileMean(hops)).toBeLessThan(0.03);
    expect(m.fanout.postLag.max).toBeLessThanOrEqual(0.1 + 0.0002 + 1e-6);
  });
});
