// Population scaling and the capacity limits around it: what a sampled post stands for, and the
// queues (partitions, Redis shards, Postgres) that must not turn sampling into phantom load.
import { describe, expect, it } from 'vitest';
import { parsePolicy } from '../../core/fanout-policy.js';
import { generateGraph } from '../../sim/graph/generate.js';
import { buildPopulation } from '../../sim/model/population.js';
import { simulate } from '../../sim/model/simulation.js';
import { basePolicy } from '../../sim/policy.js';
import { Rng } from '../../core/random.js';
import { scenarioFrom } from './fixtures.js';

const USERS = 20_000;
const graph = generateGraph({ users: USERS, avgFollows: 30, alpha: 2.3, maxFollows: 2000, followsSigma: 1, seed: 8, celebrities: [] });

function run(yaml: string, spec?: string) {
  const sc = scenarioFrom(yaml, USERS);
  const policy = spec ? parsePolicy(spec, basePolicy(sc)) : basePolicy(sc);
  return simulate({ scenario: sc, population: buildPopulation(graph, sc), policy });
}

const base = (extra: string) => `seed: 8
duration: 20m
activity:
  postsPerUserPerDay: 2
  sessionsPerUserPerDay: 4
  dormantShare: 0
  diurnal: none
${extra}`;

describe('a sampled post at population scale', () => {
  it('waits on its partition for one expansion, the other posts it stands for being a smooth load', () => {
    // 50,000 real users per sampled one; 1 ms per expansion on 64 partitions:
    // 20k x 50k x 2/day = 23.1k posts/s x 1 ms / 64 = 36% busy per partition
    const m = run(base(`population: 1000000000
infrastructure: { fanoutWorkers: 2000, writesPerSecondPerWorker: 5000, partitions: 64, costs: { expand: 1ms, expandPerFollower: 0s, eventStatements: 0s }, postToLog: 0s, api: none }
policy: { kind: push, skipDormant: false }`));
    const expected = (USERS * 50_000 * 2) / 86_400 / 1000 / 64;
    // realised posts are Poisson: ~550 probes in 20 minutes, so within 5%
    expect(Math.abs(m.fanout.partitionUtilisation - expected) / expected).toBeLessThan(0.05);
    // lumping 50,000 posts into one would hold a partition for 50 s
    expect(m.fanout.postLag.p99).toBeLessThan(0.1);
  });

  it('a burst by ordinary accounts is that many real posts: the deliveries are the writes the fleet does', () => {
    const yaml = (events: string) => base(`population: 2000000
infrastructure: { fanoutWorkers: 50, writesPerSecondPerWorker: 5000 }
policy: { kind: push, skipDormant: false }
${events}`);
    const quiet = run(yaml(''));
    const burst = run(yaml('events:\n  - at: 5m\n    celebrityBurst: { accounts: 5, window: 10s }\n'));
    const top5 = [...Array(USERS).keys()].map((a) => graph.followerOffsets[a + 1] - graph.followerOffsets[a]).sort((x, y) => y - x).slice(0, 5);
    const extra = top5.reduce((x, y) => x + y, 0);
    expect(burst.posts.total - quiet.posts.total).toBeCloseTo(5, 6);
    // organic posts differ only by chance draws: compare against the burst's own size
    expect(Math.abs(burst.fanout.deliveries - quiet.fanout.deliveries - extra)).toBeLessThan(extra * 0.02 + 1);
    expect(Math.abs(burst.fanout.writesPerSecondMean - quiet.fanout.writesPerSecondMean) * 1200).toBeLessThan(extra * 1.05 + 1);
  });

  it('spreads ordinary users over every shard: per-shard memory is balanced at scale', () => {
    const m = run(base(`population: 2000000\ninfrastructure: { redisShards: 16 }`));
    expect(m.redis.shardImbalance).toBeLessThan(1.001);
  });
});

describe('capacity limits', () => {
  it('a saturated Redis shard is reported as saturated', () => {
    const m = run(base('infrastructure: { redisShards: 1, costs: { zrange: 5ms } }'), 'pull');
    expect(m.redis.saturatedShards).toBe(1);
    expect(m.redis.peakShardUtilisation).toBeGreaterThan(1);
  });

  it('rebuilds queue on Postgres connections: a storm on a few connections waits far longer than one rebuild', () => {
    const storm = (connections: number) =>
      run(`seed: 8
duration: 20m
population: 2000000
activity: { postsPerUserPerDay: 2, sessionsPerUserPerDay: 4, dormantShare: 0.5, diurnal: none }
events:
  - at: 2m
    coldStartStorm: { share: 0.5, window: 1m }
infrastructure: { postgresConnections: ${connections}, costs: { rebuild: 40ms }, api: none }
`);
    const few = storm(10);
    const many = storm(5000);
    // 5,000 sampled returns x 100 users in 60 s = 8.3k rebuilds/s; 10 connections do 250/s
    expect(few.reads.postgresUtilisation).toBeGreaterThan(many.reads.postgresUtilisation);
    expect(few.reads.latency.p99).toBeGreaterThan(10);
    expect(many.reads.latency.p99).toBeLessThan(0.1);
    expect(few.reads.rebuilds).toBe(many.reads.rebuilds);
  });
});

describe('seeds', () => {
  it('use every bit: 42 and 2^32 + 42 are different seeds', () => {
    expect(Rng.derive(42, 'x').uint32()).not.toBe(Rng.derive(2 ** 32 + 42, 'x').uint32());
    expect(new Rng(42).uint32()).not.toBe(new Rng(2 ** 32 + 42).uint32());
  });
});

describe('long runs', () => {
  it('a 100-day run keeps its per-minute series and reports without overflowing', () => {
    const m = run(`seed: 1
duration: 100d
activity: { postsPerUserPerDay: 0.01, sessionsPerUserPerDay: 0.01, dormantShare: 0, diurnal: none }
infrastructure: { redisShards: 2 }
`);
    expect(m.series.memoryBytes).toHaveLength(144_000);
    expect(m.redis.naivePeakBytes).toBeGreaterThan(0);
  });
});
