import { describe, expect, it } from 'vitest';
import { prepare, scenarioGraph } from '../../../sim/run-scenario.js';
import { offeredLoad, readRateRefusal, startingFootprint, footprintRefusal, MAX_READ_SHARE } from '../../../sim/replay/capacity.js';
import { policyFollowerCounts, replayMapping } from '../../../sim/replay/mapping.js';
import { basePolicy } from '../../../sim/policy.js';
import { parseScenario } from '../../../sim/scenario/load.js';
import { historyPosts, postText } from '../../../sim/workload/history.js';
import { ArrivalSchedule } from '../../../sim/workload/schedule.js';
import { ScenarioError } from '../../../sim/scenario-error.js';

const TEXT = `name: burst
seed: 3
duration: 2h
population: 200000000
graph:
  generate: { users: 100000, avgFollows: 30, alpha: 2.1, celebrities: [{ count: 2, followers: 50000000, name: striker }] }
activity:
  postsPerUserPerDay: 2
  sessionsPerUserPerDay: 10
  pagesPerSession: 2
  dormantShare: 0.5
  diurnal: none
events:
  - at: 30m
    celebrityBurst: { accounts: 2, window: 60s }
infrastructure: { fanoutWorkers: 50 }
policy: { kind: threshold, threshold: 25000 }
replay: { users: 4000, timeScale: 30 }
`;

const parse = (text = TEXT) => parseScenario(text, 'burst.yaml');

describe('the replay mapping', () => {
  it('generates the live graph at replay.users with the celebrities as the same share of it, and says so', () => {
    const m = replayMapping(parse(), {}, 2);
    expect(m.users).toBe(4000);
    expect(m.timeScale).toBe(30);
    expect(m.wallSeconds).toBe(240);
    expect(m.scenario.population).toBeNull();
    expect(m.scenario.graph).toMatchObject({ kind: 'generate', users: 4000, avgFollows: 30 });
    expect(m.scenario.graph.kind === 'generate' && m.scenario.graph.celebrities).toEqual([{ count: 2, followers: 0.25, name: 'striker' }]);
    expect(m.celebrityScale).toBe(200_000_000 / 4000);
    expect(m.workers).toEqual({ asked: 50, started: 2, cap: 2 });
    expect(m.notes.join('\n')).toMatch(/share 0\.25 of the 4000 live users/);
    expect(m.notes.join('\n')).toMatch(/2 processes started, the scenario asks for 50/);
  });

  it('takes --users, --time-scale and --workers over the scenario, and refuses what cannot map', () => {
    const m = replayMapping(parse(), { users: 2000, timeScale: 60, workers: 1 }, 2);
    expect([m.users, m.timeScale, m.workers.started]).toEqual([2000, 60, 1]);
    expect(() => replayMapping(parse(), { timeScale: 0 }, 2)).toThrow(ScenarioError);
    expect(() => replayMapping(parse(), { users: 1 }, 2)).toThrow(/--users must be a whole number of at least 2/);
    expect(() => replayMapping(parse(TEXT.replace('followers: 50000000', 'followers: 300000000')), {}, 2)).toThrow(/more than the population/);
  });

  it('keeps the policies in the population\'s follower counts: the named celebrities count at population scale', () => {
    const sc = replayMapping(parse(), {}, 2);
    const graph = scenarioGraph(sc.scenario);
    const counts = policyFollowerCounts(graph.followerOffsets, graph.names, sc.celebrityScale);
    const policy = basePolicy(sc.scenario);
    for (const a of graph.names.keys()) {
      const live = graph.followerOffsets[a + 1] - graph.followerOffsets[a];
      expect(live).toBeGreaterThan(800); // about a quarter of 4,000
      expect(counts[a]).toBe(Math.round(live * sc.celebrityScale));
      expect(counts[a]).toBeGreaterThan(policy.threshold);
    }
    // ordinary accounts keep their own counts, all under the threshold: exactly the celebrities are pulled
    const pulled = [...counts.keys()].filter((a) => counts[a] > policy.threshold);
    expect(pulled.sort()).toEqual([...graph.names.keys()].sort());
  });
});

describe('what a replay offers and whether it fits', () => {
  const build = () => {
    const m = replayMapping(parse(), {}, 2);
    const graph = scenarioGraph(m.scenario);
    const prepared = prepare(m.scenario, graph);
    return { m, graph, pop: prepared.population, schedule: new ArrivalSchedule(m.scenario, prepared.population).materialize() };
  };

  it('offers the scenario\'s per-user rates, timeScale times faster', () => {
    const { m, pop, schedule } = build();
    const o = offeredLoad(schedule, m.timeScale);
    expect(o.wallSeconds).toBe(240);
    // 2 posts and 10 sessions of 2 pages a day per active user, x30
    const active = pop.activeUsers.length;
    const posts = ((active * 2) / 86400) * 30;
    const reads = ((active * 10 * 2) / 86400) * 30;
    expect(o.postsPerSecond.mean).toBeGreaterThan(posts * 0.9);
    expect(o.postsPerSecond.mean).toBeLessThan(posts * 1.1 + 2 / 240);
    expect(o.readsPerSecond.mean).toBeGreaterThan(reads * 0.9);
    expect(o.readsPerSecond.mean).toBeLessThan(reads * 1.1);
    expect(o.readsPerSecond.peak).toBeGreaterThanOrEqual(o.readsPerSecond.mean);
    expect(o.pages).toBe(o.sessions * 2);
  });

  it('refuses a read rate over the measured maximum with the largest time scale and user count that fit', () => {
    const { m, schedule } = build();
    const o = offeredLoad(schedule, m.timeScale);
    expect(readRateRefusal(o, (o.readsPerSecond.peak / MAX_READ_SHARE) * 1.01, 30, 4000)).toBeNull();
    const line = readRateRefusal(o, o.readsPerSecond.peak / MAX_READ_SHARE / 2, 30, 4000)!;
    expect(line).toMatch(/--time-scale 15 \(or --users 2000 at time scale 30\)/);
  });

  it('sizes the starting state from the history and refuses a graph that does not fit, with the largest that does', () => {
    const { m, graph, pop } = build();
    const history = historyPosts(m.scenario.seed, pop, 7 * 86400);
    // active users post 2 a day over 7 days
    expect(history.author.length / (pop.activeUsers.length * 14)).toBeGreaterThan(0.95);
    expect(history.author.length / (pop.activeUsers.length * 14)).toBeLessThan(1.05);
    for (let i = 1; i < history.offsetMs.length; i++) expect(history.offsetMs[i]).toBeGreaterThanOrEqual(history.offsetMs[i - 1]);
    expect(history.offsetMs[0]).toBeGreaterThanOrEqual(-7 * 86400 * 1000);
    expect(history.offsetMs[history.offsetMs.length - 1]).toBeLessThan(0);
    const counts = policyFollowerCounts(graph.followerOffsets, graph.names, m.celebrityScale);
    const fp = startingFootprint(m.scenario, graph, pop, history, basePolicy(m.scenario), counts);
    expect(fp.timelines).toBe(pop.activeUsers.length);
    expect(fp.redisBytes).toBeGreaterThan(fp.timelineEntries * 20);
    expect(footprintRefusal(fp, { redisBytes: fp.redisBytes * 2, postgresBytes: null, redisFrom: 'x', postgresFrom: 'y' }, 4000)).toBeNull();
    const line = footprintRefusal(fp, { redisBytes: fp.redisBytes / 4, postgresBytes: null, redisFrom: '(half of Redis\'s free memory)', postgresFrom: '' }, 4000)!;
    expect(line).toMatch(/does not fit this machine: its warm timelines and lists need about .* of Redis memory, more than the .* \(half of Redis's free memory\); the largest that fits is about --users 949$/);
  });

  it('writes texts of 40 to 280 characters, the same for the same seed and index', () => {
    for (let i = 0; i < 200; i++) {
      const t = postText(1, 'live', i);
      expect(t.length).toBeGreaterThanOrEqual(40);
      expect(t.length).toBeLessThanOrEqual(280);
      expect(postText(1, 'live', i)).toBe(t);
    }
    expect(postText(1, 'live', 0)).not.toBe(postText(2, 'live', 0));
  });
});
