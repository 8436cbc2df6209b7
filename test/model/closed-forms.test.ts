// The model against answers known in closed form.
import { describe, expect, it } from 'vitest';
import { timelineInstanceBytes, timelineNaiveBytes } from '../../core/redis-memory.js';
import { buildPopulation } from '../../sim/model/population.js';
import { simulate } from '../../sim/model/simulation.js';
import { basePolicy } from '../../sim/policy.js';
import { bipartiteGraph, scenarioFrom, starGraph } from './fixtures.js';

const quiet = `
activity:
  postsPerUserPerDay: 0
  sessionsPerUserPerDay: 0
  dormantShare: 0
  diurnal: none
`;

// The classic closed forms hold the worker pool alone: the stages before it (the API, the hop
// through the outbox relay and the log, the worker's statements) are set to nothing here and
// checked on their own in test/model/stages.test.ts.
describe('fan-out lag of one large post', () => {
  it('is F/R: 100,000 followers on 10 workers writing 5,000/s each take 2 s', () => {
    const sc = scenarioFrom(`duration: 1m
${quiet}
events:
  - at: 10s
    celebrityBurst: { accounts: 1, window: 1ms }
infrastructure:
  fanoutWorkers: 10
  writesPerSecondPerWorker: 5000
  batchSize: 1000
  costs: { rtt: 0s, expand: 0s, expandPerFollower: 0s, eventStatements: 0s }
  postToLog: 0s
  api: none
policy: { kind: push, skipDormant: false }
`, 100_001);
    const graph = starGraph(100_000);
    const m = simulate({ scenario: sc, population: buildPopulation(graph, sc), policy: basePolicy(sc) });
    expect(m.posts.total).toBe(1);
    expect(m.fanout.deliveries).toBe(100_000);
    expect(m.fanout.postLag.max).toBeCloseTo(100_000 / 50_000, 9);
    // followers are written batch by batch: the mean wait is half-way plus one batch
    expect(m.fanout.followerLag.mean).toBeCloseTo(1.1, 6);
  });

  it('is F/R at population scale for a named account: 5,000 sampled followers x 100 = 500k writes at 50k/s', () => {
    const sc = scenarioFrom(`duration: 1m
population: 500100
${quiet}
events:
  - at: 5s
    celebrityBurst: { accounts: 1, window: 1ms }
infrastructure:
  fanoutWorkers: 10
  writesPerSecondPerWorker: 5000
  batchSize: 1000
  costs: { rtt: 0s, expand: 0s, expandPerFollower: 0s, eventStatements: 0s }
  postToLog: 0s
  api: none
policy: { kind: push, skipDormant: false }
`, 5001);
    const graph = starGraph(5000, true);
    const m = simulate({ scenario: sc, population: buildPopulation(graph, sc), policy: basePolicy(sc) });
    expect(m.scale).toBeCloseTo(100, 9);
    expect(m.fanout.deliveries).toBeCloseTo(500_000, 3);
    expect(m.fanout.postLag.max).toBeCloseTo(10, 6);
  });

  it("under a threshold the same post is one list write, visible once the API has put it in its author's list: a round trip after its commit", () => {
    const sc = scenarioFrom(`duration: 1m
${quiet}
events:
  - at: 10s
    celebrityBurst: { accounts: 1, window: 1ms }
infrastructure:
  fanoutWorkers: 10
  writesPerSecondPerWorker: 5000
  costs: { rtt: 1ms, expand: 0s, expandPerFollower: 0s, eventStatements: 0s }
  postToLog: 0s
  api: none
policy: { kind: threshold, threshold: 25000 }
`, 100_001);
    const graph = starGraph(100_000);
    const m = simulate({ scenario: sc, population: buildPopulation(graph, sc), policy: basePolicy(sc) });
    expect(m.fanout.deliveries).toBe(0);
    expect(m.fanout.listWrites).toBe(1);
    expect(m.fanout.postLag.max).toBeCloseTo(0.001, 9);
  });
});

describe('queueing on one worker', () => {
  it('Poisson posts with a fixed follower count wait as M/D/1 (Pollaczek-Khinchine) within 5%', () => {
    // 100 authors with 100 followers each post 7 times a second in all; one worker writes 1,000/s:
    // D = 0.1 s, rho = 0.7, Wq = rho D / (2 (1 - rho)) = 0.11667 s, lag = Wq + D = 0.21667 s
    const perAuthorPerDay = (7 * 86400) / 100;
    const sc = scenarioFrom(`duration: 1d
activity:
  postsPerUserPerDay: ${perAuthorPerDay}
  sessionsPerUserPerDay: 0
  dormantShare: 0
  diurnal: none
infrastructure:
  fanoutWorkers: 1
  writesPerSecondPerWorker: 1000
  batchSize: 1000
  costs: { rtt: 0s, expand: 0s, expandPerFollower: 0s, eventStatements: 0s }
  postToLog: 0s
  api: none
policy: { kind: push, skipDormant: false }
`, 200);
    const graph = bipartiteGraph(100, 100);
    const m = simulate({ scenario: sc, population: buildPopulation(graph, sc), policy: basePolicy(sc) });
    const D = 0.1;
    const rho = 0.7;
    const expected = (rho * D) / (2 * (1 - rho)) + D;
    // readers post too, but to nobody: only the authors' posts use the fleet
    expect(m.posts.withoutAudience).toBeGreaterThan(0);
    expect(Math.abs(m.fanout.postLag.mean - expected) / expected).toBeLessThan(0.05);
    expect(Math.abs(m.fanout.workerUtilisation - rho)).toBeLessThan(0.02);
  });
});

describe('timeline memory', () => {
  it('equals the per-user encoding model summed, and the documents figure is 24 B per entry', () => {
    // 1,000 readers each follow 10 authors posting 100 a day: 7,000 posts in the 7-day lease, so
    // every reader's timeline starts at the cap of 800; the authors follow no one (empty timelines).
    const sc = scenarioFrom(`duration: 2m
population: 10100
activity:
  postsPerUserPerDay: 100
  sessionsPerUserPerDay: 0
  dormantShare: 0
  diurnal: none
policy: { kind: push }
`, 1010);
    const graph = bipartiteGraph(1000, 10);
    const m = simulate({ scenario: sc, population: buildPopulation(graph, sc), policy: basePolicy(sc) });
    const s = 10;
    const expected = s * (1000 * timelineInstanceBytes(800) + 10 * timelineInstanceBytes(1));
    expect(m.series.memoryBytes[0]).toBeCloseTo(expected, 0);
    expect(m.series.naiveMemoryBytes[0]).toBeCloseTo(s * 1000 * timelineNaiveBytes(800), 0);
    // an 800-entry timeline is ~5x what the documents assume
    expect(timelineInstanceBytes(800) / timelineNaiveBytes(800)).toBeGreaterThan(4.5);
    // pushes into full timelines keep them at the cap: memory does not move
    expect(m.redis.endBytes).toBeCloseTo(expected, 0);
  });
});

describe('read latency on idle shards', () => {
  // 2 round trips + a slice of the timeline, of the reader's own list and of each pulled list + MGET of the page
  const sc = scenarioFrom(`duration: 1d
activity:
  postsPerUserPerDay: 0
  sessionsPerUserPerDay: 100
  pagesPerSession: 1
  pageSize: 20
  dormantShare: 0
  diurnal: none
infrastructure:
  redisShards: 8
  costs: { rtt: 0.3ms, zrange: 15us, mgetPerKey: 2us }
  api: none
`, 105);
  const graph = bipartiteGraph(100, 5);
  const run = (kind: 'push' | 'pull') =>
    simulate({ scenario: sc, population: buildPopulation(graph, sc), policy: { ...basePolicy(sc), kind } });

  it('is 2 x rtt + 2 slices + 20 x MGET-per-key = 670 us under push, with 6 Redis commands', () => {
    const m = run('push');
    expect(m.reads.latency.p50).toBeCloseTo(0.00067, 6);
    // a lease renewal and a slice for the timeline and the own list, the follows token, the MGET
    expect(m.reads.redisOpsPerRead).toBe(6);
  });

  it('adds one slice per pulled author under pull: 5 authors make 745 us and 16 commands', () => {
    const m = run('pull');
    expect(m.reads.latency.p50).toBeCloseTo(0.00067 + 5 * 0.000015, 6);
    // the 100 readers follow 5 authors each (16 commands); the 5 authors follow no one (6); of
    // 10,500 reads drawn at random, 100/105 are by readers, give or take 0.2%
    expect(Math.abs(m.reads.redisOpsPerRead - (100 * 16 + 5 * 6) / 105)).toBeLessThan(0.05);
  });
});
