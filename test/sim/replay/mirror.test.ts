// The simulator's run of a replay's world: the replay's graph, population, policy counts and
// schedule on the reference deployment's shape.
import { describe, expect, it } from 'vitest';
import { buildWorld } from '../../../cli/replay/world.js';
import { parsePolicy } from '../../../core/fanout-policy.js';
import { replayMapping } from '../../../sim/replay/mapping.js';
import { mirrorScenario, replayKeyPrefix, simulateMirror } from '../../../sim/replay/mirror.js';
import { KEYSPACE_BYTES_PER_KEY, zsetUsageBytes } from '../../../core/redis-memory.js';
import { timelineKey } from '../../../core/keys.js';
import type { RunResult } from '../../../sim/result.js';
import { basePolicy } from '../../../sim/policy.js';
import { parseScenario } from '../../../sim/scenario/load.js';

const sc = parseScenario(`name: mirror
seed: 3
duration: 20m
population: 1000000
graph:
  generate: { users: 20000, avgFollows: 20, alpha: 2.2, celebrities: [{ count: 2, followers: 300000, name: star }] }
activity: { postsPerUserPerDay: 5, sessionsPerUserPerDay: 6, dormantShare: 0.4, diurnal: none }
events:
  - at: 5m
    celebrityBurst: { accounts: 2, window: 1m }
infrastructure: { fanoutWorkers: 40, redisShards: 4 }
policy: { kind: threshold, threshold: 25000 }
replay: { users: 2000, timeScale: 10, workers: 3 }
`, 'mirror.yaml');
const mapping = replayMapping(sc, {}, 2);
const world = await buildWorld(mapping);

describe('mirrorScenario', () => {
  it("is the mapped world on the reference deployment: the workers started, whole posts, one API core, one Redis, this machine's cores", () => {
    const m = mirrorScenario(world.mapping, 2);
    expect(m.duration).toBe(120);
    expect(m.infrastructure.fanoutWorkers).toBe(2);
    expect(m.infrastructure.worker.splitPosts).toBe(false);
    expect(m.infrastructure.api).toMatchObject({ instances: 1, coresPerInstance: 1 });
    expect(m.infrastructure.cores).toBe(2);
    // the replay's 16 shards are key groups on this machine's one Redis
    expect(m.infrastructure.redisShards).toBe(world.mapping.scenario.infrastructure.redisShards);
    expect(m.infrastructure.redisProcesses).toBe(1);
    expect(m.infrastructure.partitions).toBe(16);
    expect(m.infrastructure.postgresConnections).toBe(20);
    expect(m.population).toBeNull();
  });
});

describe('simulateMirror', () => {
  const policy = basePolicy(world.mapping.scenario);

  it("sends the replay's own schedule with the scenario's seed: every post of it, on the wall clock", () => {
    const r = simulateMirror(world, policy, sc.seed, 2);
    expect(r.scenario.durationSeconds).toBe(120);
    expect(r.summary.posts.total).toBe(world.schedule.posts.at.length);
    expect(r.scenario.scale).toBe(1);
    // the stars have 15% of the live users (300 followers) but 300,000 at population scale: pulled
    const stars = [...world.graph.names.keys()];
    expect(stars.every((a) => world.followerCounts[a] > 25_000)).toBe(true);
    expect(r.summary.posts.pulled).toBeGreaterThanOrEqual(2);
    expect(JSON.stringify(simulateMirror(world, policy, sc.seed, 2))).toBe(JSON.stringify(r));
  });

  it("another seed draws the model's own randomness anew over the same schedule", () => {
    const a = simulateMirror(world, policy, sc.seed, 2);
    const b = simulateMirror(world, policy, sc.seed + 1, 2);
    // the same posts and the same writes; other hops and waits
    expect(b.summary.posts.total).toBe(a.summary.posts.total);
    expect(b.summary.fanout.deliveries).toBe(a.summary.fanout.deliveries);
    expect(b.summary.fanout.lagSeconds.mean).not.toBe(a.summary.fanout.lagSeconds.mean);
    expect(b.series.memoryBytes[0]).toBe(a.series.memoryBytes[0]);
  });

  it('under push the stars fan out to their live followers, written whole by one worker', () => {
    const push = simulateMirror(world, parsePolicy('push', policy), sc.seed, 2);
    expect(push.summary.posts.pulled).toBe(0);
    expect(push.summary.fanout.deliveries).toBeGreaterThan(0);
  });

  it("counts the feeds' memory under the replay's key names: a one-entry timeline is 136 B of MEMORY USAGE there, 104 B without", () => {
    // a replay's scratch prefix with a 7-digit pid: every timeline name of 1-4 digit ids is 45-48 characters
    const prefix = 'feedlab:replay:1234567_abcdef:';
    const pull = parsePolicy('pull', policy);
    const bare = simulateMirror(world, pull, sc.seed, 2);
    const named = simulateMirror(world, pull, sc.seed, 2, prefix);
    const timelines = named.summary.redis.timelines;
    expect(timelines).toBe(world.population.activeUsers.length);
    for (const id of ['0', '1999']) {
      expect(zsetUsageBytes(1, timelineKey(id).length)).toBe(104);
      expect(zsetUsageBytes(1, prefix.length + timelineKey(id).length)).toBe(136);
    }
    // under pull every timeline is the one-entry sentinel of an empty feed
    expect(bare.summary.redis.usageBytes!.timelines).toBe(timelines * (104 + KEYSPACE_BYTES_PER_KEY));
    expect(named.summary.redis.usageBytes!.timelines).toBe(timelines * (136 + KEYSPACE_BYTES_PER_KEY));
    expect(named.summary.redis.usageBytes!.lists).toBeGreaterThan(bare.summary.redis.usageBytes!.lists);
    expect(named.summary.redis.usageBytes!.keyPrefix).toBe(prefix);
    expect(bare.summary.redis.usageBytes!.keyPrefix).toBeUndefined();
  });
});

describe('replayKeyPrefix', () => {
  const doc = (replay: unknown) => ({ replay }) as unknown as RunResult;
  it("is the key space the replay's memory was measured under, else its scratch prefix (older documents), else none", () => {
    expect(replayKeyPrefix(doc({ memory: { keyPrefix: 'tenant:' }, scratch: { keyPrefix: 'feedlab:replay:1_a:' } }))).toBe('tenant:');
    expect(replayKeyPrefix(doc({ memory: {}, scratch: { keyPrefix: 'feedlab:replay:1_a:' } }))).toBe('feedlab:replay:1_a:');
    expect(replayKeyPrefix(doc({ memory: {}, scratch: null }))).toBe('');
    expect(replayKeyPrefix(doc(undefined))).toBe('');
  });
});
