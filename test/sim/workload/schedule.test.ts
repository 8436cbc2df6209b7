import { describe, expect, it } from 'vitest';
import { prepare, scenarioGraph } from '../../../sim/run-scenario.js';
import { simulate } from '../../../sim/model/simulation.js';
import { basePolicy } from '../../../sim/policy.js';
import { parseScenario } from '../../../sim/scenario/load.js';
import { ArrivalSchedule, scheduleDigest } from '../../../sim/workload/schedule.js';

const TEXT = `name: schedule
seed: 7
duration: 30m
graph:
  generate: { users: 3000, avgFollows: 20, alpha: 2.2, celebrities: [{ count: 2, followers: 0.2, name: star }] }
activity:
  postsPerUserPerDay: { dist: lognormal, mean: 4, sigma: 1 }
  sessionsPerUserPerDay: 20
  dormantShare: 0.4
  diurnal: { peakFactor: 3, peakHourUtc: 20, startHourUtc: 19 }
events:
  - at: 5m
    celebrityBurst: { accounts: 2, window: 30s, postsPerAccount: 3 }
  - at: 10m
    breakingNews: { multiplier: 5, window: 2m }
  - at: 15m
    coldStartStorm: { share: 0.1, window: 1m }
  - at: 20m
    cacheLoss: { shards: 2 }
infrastructure: { fanoutWorkers: 4, redisShards: 8 }
`;

function build(seed = 7) {
  const sc = parseScenario(TEXT.replace('seed: 7', `seed: ${seed}`), 'schedule.yaml');
  const prepared = prepare(sc, scenarioGraph(sc));
  return { sc, prepared, schedule: new ArrivalSchedule(sc, prepared.population) };
}

describe('the arrival schedule', () => {
  it('is the same bytes for the same scenario and seed, and different for another seed', () => {
    const a = build().schedule.materialize();
    const b = build().schedule.materialize();
    expect(scheduleDigest(a)).toBe(scheduleDigest(b));
    expect(Buffer.from(a.posts.at.buffer).equals(Buffer.from(b.posts.at.buffer))).toBe(true);
    expect(scheduleDigest(build(8).schedule.materialize())).not.toBe(scheduleDigest(a));
  });

  it('holds every event: burst posts by the celebrities, storm returns, the cache loss, a faster post rate in the news window', () => {
    const { schedule, prepared } = build();
    const s = schedule.materialize();
    const stars = new Set([...prepared.graph.names.keys()]);
    const burst = [...s.posts.burst.keys()].filter((i) => s.posts.burst[i] === 1);
    expect(burst).toHaveLength(6);
    for (const i of burst) {
      expect(stars.has(s.posts.author[i])).toBe(true);
      expect(s.posts.at[i]).toBeGreaterThanOrEqual(300);
      expect(s.posts.at[i]).toBeLessThan(330);
    }
    const dormant = new Set(prepared.population.dormantUsers);
    const returning = [...s.sessions.returning.keys()].filter((i) => s.sessions.returning[i] === 1);
    expect(returning).toHaveLength(Math.round(0.1 * prepared.population.dormantUsers.length));
    for (const i of returning) {
      expect(dormant.has(s.sessions.user[i])).toBe(true);
      expect(s.sessions.at[i]).toBeGreaterThanOrEqual(900);
      expect(s.sessions.at[i]).toBeLessThan(960);
    }
    expect(s.cacheLosses).toEqual([{ at: 1200, shards: 2 }]);
    // organic sessions only by active users, in time order
    const active = new Set(prepared.population.activeUsers);
    for (let i = 1; i < s.sessions.at.length; i++) expect(s.sessions.at[i]).toBeGreaterThanOrEqual(s.sessions.at[i - 1]);
    for (let i = 0; i < s.sessions.at.length; i++) if (!s.sessions.returning[i]) expect(active.has(s.sessions.user[i])).toBe(true);
    // breaking news: five times the rate of the two minutes before it
    const count = (from: number, to: number) => s.posts.at.filter((t) => t >= from && t < to).length;
    const ratio = count(600, 720) / count(480, 600);
    expect(ratio).toBeGreaterThan(3.5);
    expect(ratio).toBeLessThan(7);
    expect(s.events.map((e) => e.kind)).toEqual(['celebrityBurst', 'breakingNews', 'coldStartStorm', 'cacheLoss']);
  });

  it('is what the simulator runs: its posts and reads are the schedule\'s', () => {
    const { sc, prepared, schedule } = build();
    const s = schedule.materialize();
    const m = simulate({ scenario: sc, population: prepared.population, policy: basePolicy(sc), schedule });
    expect(m.posts.total).toBe(s.posts.at.length);
    let pages = 0;
    for (let i = 0; i < s.sessions.pages.length; i++) pages += s.sessions.pages[i];
    // a session ends at the last page its reader's feed holds, as the server's null cursor ends it
    expect(m.reads.total).toBeLessThanOrEqual(pages);
    expect(m.reads.total).toBeGreaterThanOrEqual(s.sessions.at.length);
    // a schedule made afresh gives the simulator the same run
    const again = simulate({ scenario: sc, population: prepared.population, policy: basePolicy(sc) });
    expect(again.reads.latency).toEqual(m.reads.latency);
    expect(again.fanout.followerLag).toEqual(m.fanout.followerLag);
  });

  it("holds the live stack's faults for the replay, models a flush's cache part, and names what it does not model", () => {
    const text = TEXT.replace(
      '  - at: 20m\n    cacheLoss: { shards: 2 }\n',
      '  - at: 20m\n    workerCrash: { workers: 1, down: 1m }\n  - at: 22m\n    eventLogLoss: {}\n  - at: 25m\n    redisFlush: {}\n' +
        '  - at: 26m\n    redisOutage: { window: 20s }\n  - at: 27m\n    postgresOutage: { window: 30s, mode: hang }\n',
    );
    const sc = parseScenario(text, 'faults.yaml');
    const prepared = prepare(sc, scenarioGraph(sc));
    const s = new ArrivalSchedule(sc, prepared.population).materialize();
    expect(s.workerCrashes).toEqual([{ at: 1200, workers: 1, down: 60 }]);
    expect(s.keyLosses).toEqual([
      { at: 1320, kind: 'eventLogLoss' },
      { at: 1500, kind: 'redisFlush' },
    ]);
    expect(s.outages).toEqual([
      { at: 1560, service: 'redis', window: 20, mode: 'reset' },
      { at: 1620, service: 'postgres', window: 30, mode: 'hang' },
    ]);
    // a flush loses every shard's keys, which the model runs; the log's loss and the outages it does not
    expect(s.cacheLosses).toEqual([{ at: 1500, shards: 8 }]);
    const notes = Object.fromEntries(s.events.filter((e) => e.at >= 1200).map((e) => [e.kind, e.detail]));
    expect(notes).toEqual({
      workerCrash: '1 fan-out worker killed for 60s (modelled as down for 60s; their start-up and the redelivery of what they held, replay only)',
      eventLogLoss: "the event log's keys lost, the timelines kept (replay only: not modelled)",
      redisFlush: "Redis flushed: every shard's keys and the event log lost (the log's loss replay only)",
      redisOutage: 'Redis out of reach for 20s (connections reset; replay only: not modelled)',
      postgresOutage: 'Postgres out of reach for 30s (connections hang; replay only: not modelled)',
    });
    const m = simulate({ scenario: sc, population: prepared.population, policy: basePolicy(sc) });
    expect(m.reads.coldReads).toBeGreaterThan(0);
    // a count of workers is at least 1; an outage breaks the path one of two ways
    expect(() => parseScenario(text.replace('workers: 1', 'workers: 0'), 'faults.yaml')).toThrow(/events\[3\]\.workerCrash\.workers: 0 is out of range \(valid: >= 1\)/);
    expect(() => parseScenario(text.replace('mode: hang', 'mode: slow'), 'faults.yaml')).toThrow(/events\[7\]\.postgresOutage\.mode/);
  });

  it('models a crash of every worker: nothing is delivered while they are down, and the posts of that minute wait for the restart', () => {
    const text = TEXT.replace('  - at: 20m\n    cacheLoss: { shards: 2 }\n', '  - at: 20m\n    workerCrash: { down: 2m }\n');
    const run = (t: string) => {
      const sc = parseScenario(t, 'crash.yaml');
      const prepared = prepare(sc, scenarioGraph(sc));
      return simulate({ scenario: sc, population: prepared.population, policy: basePolicy(sc) });
    };
    const crashed = run(text);
    const calm = run(TEXT.replace('  - at: 20m\n    cacheLoss: { shards: 2 }\n', ''));
    // a post created at 20 m waits until 22 m: lag up to 2 minutes, where every worker up keeps it under seconds
    expect(crashed.fanout.postLag.max).toBeGreaterThan(110);
    expect(crashed.fanout.postLag.max).toBeLessThan(130);
    expect(calm.fanout.postLag.max).toBeLessThan(10);
    expect(crashed.fanout.deliveries).toBe(calm.fanout.deliveries);
  });
});
