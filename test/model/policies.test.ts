// What each fan-out policy does to the same workload, and that runs are reproducible.
import { describe, expect, it } from 'vitest';
import { parsePolicy } from '../../core/fanout-policy.js';
import { commandsPerPage } from '../../core/read-plan.js';
import { generateGraph } from '../../sim/graph/generate.js';
import { buildPopulation } from '../../sim/model/population.js';
import { simulate } from '../../sim/model/simulation.js';
import { basePolicy } from '../../sim/policy.js';
import { buildResult, stringifyResult } from '../../sim/result.js';
import type { Scenario } from '../../sim/scenario/types.js';
import { scenarioFrom } from './fixtures.js';

const USERS = 20_000;

function workload(extra = '', seed = 3): Scenario {
  return scenarioFrom(
    `seed: ${seed}
duration: 30m
activity:
  postsPerUserPerDay: { dist: lognormal, mean: 20, sigma: 1 }
  sessionsPerUserPerDay: 20
  dormantShare: 0.5
  diurnal: none
infrastructure:
  fanoutWorkers: 4
  writesPerSecondPerWorker: 5000
  redisShards: 8
${extra}`,
    USERS,
  );
}

const graph = generateGraph({ users: USERS, avgFollows: 50, alpha: 2.1, maxFollows: 2000, followsSigma: 1, seed: 3, celebrities: [{ count: 3, followers: 0.5, name: 'star' }] });

function run(sc: Scenario, spec?: string) {
  const policy = spec ? parsePolicy(spec, basePolicy(sc)) : basePolicy(sc);
  return simulate({ scenario: sc, population: buildPopulation(graph, sc), policy });
}

describe('determinism', () => {
  it('the same scenario and seed give byte-identical result documents; another seed does not', () => {
    const sc = workload();
    const doc = (s: Scenario) => stringifyResult(buildResult(s, { users: graph.users, edges: graph.edges, provenance: { ...graph.provenance } }, run(s)));
    const a = doc(sc);
    expect(doc(workload())).toBe(a);
    expect(doc(workload('', 4))).not.toBe(a);
  });
});

describe('policies on one workload', () => {
  const sc = workload(`events:\n  - at: 10m\n    celebrityBurst: { accounts: 3, window: 10s }\n`);
  const push = run(sc, 'push:skip-dormant');
  const pull = run(sc, 'pull');
  const threshold = run(sc, 'threshold:5000:skip-dormant');
  const everyone = run(sc, 'push:all-followers');

  it('push writes every eligible follower; pull writes only one list entry per post', () => {
    expect(pull.fanout.deliveries).toBe(0);
    expect(pull.fanout.listWrites).toBe(pull.posts.total);
    expect(push.fanout.listWrites).toBe(0);
    expect(push.fanout.deliveries).toBeGreaterThan(pull.posts.total);
  });

  it('pull reads fetch one list per followee; push reads only the timeline and the own list (plus token and hydration)', () => {
    expect(push.reads.redisOpsPerRead).toBeCloseTo(commandsPerPage(0), 9);
    expect(pull.reads.redisOpsPerRead).toBeGreaterThan(10);
  });

  it('a threshold sits between them: fewer writes than push, fewer read operations than pull', () => {
    expect(threshold.fanout.deliveries).toBeLessThan(push.fanout.deliveries);
    expect(threshold.reads.redisOpsPerRead).toBeLessThan(pull.reads.redisOpsPerRead);
    expect(threshold.reads.redisOpsPerRead).toBeGreaterThan(commandsPerPage(0));
    // the three 10k-follower stars are pulled, so their burst costs three list writes, not 30k writes
    expect(threshold.fanout.postLag.max).toBeLessThan(push.fanout.postLag.max);
  });

  it('skipping dormant followers saves about their share of writes and all of their timeline memory', () => {
    const saved = 1 - push.fanout.deliveries / everyone.fanout.deliveries;
    expect(saved).toBeGreaterThan(0.4);
    expect(saved).toBeLessThan(0.6);
    expect(push.redis.endBytes).toBeLessThan(everyone.redis.endBytes * 0.7);
  });

  it('a reader-side cap drops deliveries to readers who follow more than the cap', () => {
    const capped = run(sc, 'reader-cap:20:skip-dormant');
    expect(capped.fanout.deliveries).toBeLessThan(push.fanout.deliveries * 0.9);
    expect(capped.reads.redisOpsPerRead).toBeCloseTo(commandsPerPage(0), 9);
  });

  it('the rate rule pulls frequent posters for rare readers and pushes the rest', () => {
    const rate = run(sc, 'rate:skip-dormant');
    expect(rate.fanout.deliveries).toBeGreaterThan(0);
    expect(rate.fanout.listWrites).toBeGreaterThan(0);
    expect(rate.fanout.deliveries).toBeLessThan(push.fanout.deliveries);
  });

  it('an adaptive threshold falls while the backlog is over its bound, and holds lag below push', () => {
    // one slow worker (40 writes/s) against ~60 writes/s of pushes: push falls behind for good
    const overloaded = (policy: string) =>
      scenarioFrom(
        `seed: 3
duration: 30m
activity:
  postsPerUserPerDay: { dist: lognormal, mean: 20, sigma: 1 }
  sessionsPerUserPerDay: 20
  dormantShare: 0.5
  diurnal: none
infrastructure: { fanoutWorkers: 1, writesPerSecondPerWorker: 40, redisShards: 8 }
policy: ${policy}
`,
        USERS,
      );
    const adaptive = run(overloaded('{ kind: adaptive, threshold: 100000, backlogBound: 500, minThreshold: 10 }'));
    const pushed = run(overloaded('{ kind: push }'));
    expect(pushed.fanout.backlogAtEndWrites).toBeGreaterThan(5000);
    expect(adaptive.fanout.thresholdChanges).toBeGreaterThan(0);
    expect(adaptive.fanout.minThreshold).toBeLessThan(100_000);
    expect(adaptive.fanout.postLag.p99).toBeLessThan(pushed.fanout.postLag.p99 / 2);
    expect(Math.min(...adaptive.series.threshold!)).toBe(adaptive.fanout.minThreshold);
  });
});

describe('events', () => {
  it('a cache loss empties its shards: memory drops and the next reads there are cold', () => {
    const sc = workload(`events:\n  - at: 10m\n    cacheLoss: { shards: 2 }\n`);
    const m = run(sc);
    const before = m.series.memoryBytes[8];
    const after = m.series.memoryBytes[10];
    expect(after).toBeLessThan(before * 0.85);
    expect(m.reads.coldReads).toBeGreaterThan(0);
    const none = run(workload());
    expect(none.reads.coldReads).toBe(0);
  });

  it('a cold-start storm brings dormant users back to missing timelines, each rebuilt once', () => {
    const sc = workload(`events:\n  - at: 5m\n    coldStartStorm: { share: 0.2, window: 5m }\n`);
    const m = run(sc);
    // 20% of the 10,000 dormant users return; each first read is cold
    expect(m.reads.coldReads).toBe(2000);
    expect(m.series.coldReads.slice(5, 10).reduce((a, b) => a + b, 0)).toBe(2000);
  });

  it('breaking news multiplies the post rate inside its window', () => {
    const sc = workload(`events:\n  - at: 10m\n    breakingNews: { multiplier: 10, window: 5m }\n`);
    const m = run(sc);
    const inside = m.series.posts.slice(10, 15).reduce((a, b) => a + b, 0) / 5;
    const outside = m.series.posts.slice(0, 10).reduce((a, b) => a + b, 0) / 10;
    expect(inside / outside).toBeGreaterThan(8);
    expect(inside / outside).toBeLessThan(12);
  });
});
