// The plan agrees with itself: the simulation check runs the planned fleet (partitions and shards,
// not the scenario's) and stops when more workers do not help; cold starts are sized at the peak on
// the planned shards; the reasons, the binding constraint and the what-ifs are computed at one design
// point on the table's p50 fleet; the what-ifs compare all of Redis memory; the lag model's rates
// are on one footing; and the words count right.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { changeText } from '../../sim/plan/binding.js';
import { lagEstimate, lagModel } from '../../sim/plan/fanout.js';
import { likelyPoint, planSettings } from '../../sim/plan/inputs.js';
import type { Load } from '../../sim/plan/load.js';
import { loadAt } from '../../sim/plan/load.js';
import { buildPlan, type PlanDocument } from '../../sim/plan/plan.js';
import { evaluatePoint, reasonFor, RESOURCE_IDS, type PlanContext } from '../../sim/plan/resources.js';
import { measureWorkload, peakFactors } from '../../sim/plan/workload.js';
import { basePolicy, prepare, scenarioGraph } from '../../sim/run-scenario.js';
import { parseScenario } from '../../sim/scenario/load.js';
import type { Scenario } from '../../sim/scenario/types.js';
import { SECONDS_PER_DAY } from '../../core/timeline-rules.js';
import { fixtures, load, OPTIONS, plan, resource } from './helpers.js';

const workloadRow = (doc: PlanDocument, id: string) => doc.workload.find((r) => r.id === id)!;

/** plan-push.yaml with its text changed: a celebrity burst pushed to 600k followers, no intervals. */
function pushWith(edit: (yaml: string) => string, name = 'variant.yaml'): Scenario {
  return parseScenario(edit(readFileSync(join(fixtures, 'plan-push.yaml'), 'utf8')), name);
}

describe('the simulation check runs the planned fleet', () => {
  test('at --growth 1000 it simulates the planned partitions and shards, so the workers are not multiplied while the partitions saturate', () => {
    const sc = load('plan-small.yaml');
    const doc = plan(sc, { growth: 1000 });
    const workers = resource(doc, 'fanoutWorkers').values;
    const shards = resource(doc, 'redisShards').values;
    // one run each: the checked fleet meets the objective at once
    expect(doc.check.map((c) => c.runs.length)).toEqual([1, 1]);
    for (const c of doc.check) {
      // the scenario has 64 partitions and 8 shards; the plan needs hundreds of each at this load
      for (const r of c.runs) expect(r.partitions).toBe(Math.max(c.expansionPartitions, r.workers));
      expect(c.expansionPartitions).toBeGreaterThan(64);
      expect(c.shards).toBeGreaterThanOrEqual(shards.p5);
      expect(c.shards).toBeGreaterThan(10 * sc.infrastructure.redisShards);
      expect(c.pass).toBe(true);
    }
    // the checked p95 fleet is the closed form's, not 191,929 workers after 8 runs
    expect(workers.p95).toBeLessThan(2 * workers.p50);
    expect(resource(doc, 'partitions').values.p95).toBe(doc.check.find((c) => c.quantile === 'p95')!.partitions);
    expect(doc.problems.join('\n')).not.toMatch(/lag objective/);
  });

  test('when more workers do not lower the simulated lag it stops and names what sets the lag, instead of inflating the fleet', () => {
    // celebrity posts go to a large-post pool of 2 workers that the check does not grow
    const sc = pushWith((y) => y.replace('infrastructure: { fanoutWorkers: 8,', 'infrastructure: { largePostClass: { followers: 100000, workers: 2 }, fanoutWorkers: 8,'));
    const doc = plan(sc);
    const c = doc.check[0];
    expect(c.pass).toBe(false);
    expect(c.runs).toHaveLength(2);
    expect(c.runs[1].lagP99Seconds).toBeGreaterThanOrEqual(c.runs[0].lagP99Seconds * 0.99);
    expect(c.workers).toBe(c.runs[0].workers);
    expect(resource(doc, 'fanoutWorkers').values.p50).toBe(c.runs[0].workers);
    expect(c.notSetByFleet).toMatch(/^the simulated lag p99 stayed at [\d.]+ s from \d+ to \d+ workers: the large-post pool sets it \(infrastructure\.largePostClass: 2 workers/);
    expect(doc.problems[0]).toMatch(/^the lag objective at p50: not set by the fan-out fleet: .*large-post pool sets it/);
    expect(resource(doc, 'fanoutWorkers').reason).toMatch(/: \d+ kept, as the lag is not set by the fan-out fleet: /);
  });

  test('an objective below one batch is reported after one run: no fleet meets it', () => {
    const sc = pushWith((y) => y.replace('fanoutLagP99: 5s', 'fanoutLagP99: 100ms'));
    const doc = plan(sc);
    const c = doc.check[0];
    expect(c.runs).toHaveLength(1);
    expect(c.notSetByFleet).toBe(
      'one batch sets a floor of 201 ms a delivery (reading the follower list 1 ms + a round trip 0.3 ms + 1,000 writes at 5,000/s 200 ms), above the objective of 100 ms: no fleet meets it; a smaller infrastructure.batchSize or faster workers lower it',
    );
    expect(doc.satisfied).toBe(false);
  });

  test('the check document reports the shards and partitions it ran with, and what it measured on them', () => {
    const doc = plan(load('plan-push.yaml'));
    const c = doc.check[0];
    expect(c.shards).toBe(resource(doc, 'redisShards').values.p50);
    expect(c.partitions).toBe(resource(doc, 'partitions').values.p50);
    expect(c.readP99Ms).toBeGreaterThan(0);
    expect(c.peakMemoryBytes).toBeGreaterThan(0);
  });
});

describe('cold starts from a cache loss', () => {
  test('are the readers of the lost share of the planned shards, rebuilding at the read peak, and size Postgres', () => {
    const sc = pushWith((y) => y.replace('diurnal: none', 'diurnal: { peakFactor: 3, peakHourUtc: 20 }').replace('events:\n', 'events:\n  - at: 10m\n    cacheLoss: { shards: 1 }\n'));
    const graph = scenarioGraph(sc);
    const pop = prepare(sc, graph).population;
    const doc = buildPlan({ scenario: sc, graph, options: OPTIONS });
    const shards = resource(doc, 'redisShards').values.p50;
    expect(shards).toBeGreaterThan(1);
    expect(shards).not.toBe(sc.infrastructure.redisShards);
    const sessions = (pop.activeUsers.length * pop.scale * sc.activity.sessionsPerUserPerDay) / SECONDS_PER_DAY;
    const peak = peakFactors(sc).reads;
    expect(peak).toBeCloseTo(3, 6);
    const rebuilds = workloadRow(doc, 'rebuildsPerSecond').values.p50;
    expect(rebuilds).toBeCloseTo((sessions * peak) / shards, 6);
    // Little's law and square-root staffing on the rebuilds at the peak
    const a = rebuilds * sc.infrastructure.costs.rebuild;
    expect(resource(doc, 'postgresConnections').values.p50).toBe(Math.ceil(Math.ceil(a + 2.375 * Math.sqrt(a) - 1e-9) / 0.7 - 1e-9));
    expect(resource(doc, 'postgresConnections').reason).toMatch(new RegExp(`the loss of 1 of the ${shards} planned Redis shards \\(their readers rebuild at their next session, at the read peak\\)`));
  });
});

describe('one design point', () => {
  const sc = load('plan-small.yaml');
  const doc = plan(sc, { growth: 20 });
  const p50 = (id: string) => resource(doc, id).values.p50;

  test('the binding constraint and the what-ifs hold the table\'s p50 fleet, shards and nodes named apart', () => {
    expect(doc.designPoint).toMatchObject({ workers: p50('fanoutWorkers'), shards: p50('redisShards'), nodes: p50('redisNodes'), partitions: p50('partitions') });
    const memory = doc.binding.constraints.find((c) => c.id === 'memory')!;
    expect(memory.limit).toContain(`${p50('redisShards')} shards (${p50('redisNodes')} nodes with replicas)`);
    expect(doc.binding.constraints.find((c) => c.id === 'lag')!.limit).toMatch(new RegExp(`with ${p50('fanoutWorkers')} workers?$`));
    expect(doc.binding.constraints.find((c) => c.id === 'readLatency')!.limit).toMatch(new RegExp(`with ${p50('redisShards')} shards$`));
    for (const w of doc.whatIfs) expect(w.figures.find((f) => f.id === 'redisShards')!.from).toBe(p50('redisShards'));
    // the design point's timeline memory is the table's p50, within a few per cent
    const timeline = doc.whatIfs[0].figures.find((f) => f.id === 'timelineMemory')!.from;
    expect(Math.abs(timeline / workloadRow(doc, 'timelineMemory').values.p50 - 1)).toBeLessThan(0.03);
  });

  test('every reason is computed at that one sample, and the figures it quotes are within the table', () => {
    const graph = scenarioGraph(sc);
    const ctx: PlanContext = { scenario: sc, policy: basePolicy(sc), settings: planSettings(sc), growth: 20, headroom: 0.3 };
    const w = measureWorkload(prepare(sc, graph), ctx.policy, likelyPoint(sc, graph));
    const f = evaluatePoint(w, ctx, doc.designPoint.point, { workers: doc.designPoint.workers });
    for (const id of RESOURCE_IDS) expect(resource(doc, id).reason.startsWith(reasonFor(id, f, ctx)), id).toBe(true);
    const pages = workloadRow(doc, 'pagesPerSecondPeak').values;
    expect(f.load.pagesPeak).toBeGreaterThanOrEqual(pages.p5);
    expect(f.load.pagesPeak).toBeLessThanOrEqual(pages.p95);
    // where no sample has every p50, the reason says so next to its own figure
    for (const id of RESOURCE_IDS) {
      const d = doc.designPoint.differs.find((x) => x.id === id);
      if (d) expect(resource(doc, id).reason, id).toContain(`at the design point; the p50 over the samples is ${resource(doc, id).display.p50})`);
      else expect(resource(doc, id).reason, id).not.toContain('at the design point');
    }
    const api = doc.designPoint.differs.find((x) => x.id === 'apiInstances');
    expect(resource(doc, 'apiInstances').reason).toContain(`= ${api ? api.value : p50('apiInstances')} instances`);
    expect(doc.designPoint.text).toMatch(/^sample \d+ of 100 \(users \(population\) [\d,]+, posts per user per day [\d.]+, sessions per user per day [\d.]+\), of the samples with /);
  });
});

describe('what-ifs', () => {
  test('compare the Redis memory used and provisioned, so a shorter lease on pull lists is not "nothing"', () => {
    const sc = pushWith((y) => y.replace('policy: { kind: push }', 'policy: { kind: pull }'));
    const doc = plan(sc);
    const lease = doc.whatIfs.find((w) => w.knob === 'policy.leaseDays')!;
    const used = lease.figures.find((f) => f.id === 'redisMemoryUsed')!;
    const provisioned = lease.figures.find((f) => f.id === 'redisMemoryProvisioned')!;
    expect(used.to).toBeLessThan(used.from * 0.99);
    expect(provisioned.to).toBeLessThan(provisioned.from * 0.99);
    expect(lease.text).not.toMatch(/changes nothing/);
    expect(lease.text).toMatch(/^a lease of 3\.5 days instead of 7 cuts Redis memory used by \d+% \([\d.]+ [GM]B -> [\d.]+ [GM]B; provisioned [\d.]+ [GM]B -> [\d.]+ [GM]B\)/);
  });

  test('say a rise over 2x as a multiple', () => {
    expect(changeText('lag', 1, 1075.84)).toBe('raises lag 1,076x');
    expect(changeText('lag', 1, 3.14)).toBe('raises lag 3.1x');
    expect(changeText('lag', 1, 2)).toBe('doubles lag');
    expect(changeText('lag', 1, 1.5)).toBe('raises lag by 50%');
  });
});

describe('the lag model', () => {
  test("the celebrities' share of the run's deliveries takes both rates over the run", () => {
    const m = { perWorker: 5000, rtt: 0.0003, batchSize: 1000, expand: 0.001, runSeconds: 1200 };
    // named posts are 2/300 of the daily mean writes but 6/300 over the run (3x its mean): over 1%, so the p99 delivery is in them
    const base = { writesPeak: 300, writesRunMean: 300, audienceP99: 100, burst: null, largestPost: 600_000, namedWritesMean: 2, namedWritesRunMean: 6 } as unknown as Load;
    const ordinary = lagEstimate(100, { ...base, namedWritesMean: 0, namedWritesRunMean: 0 } as Load, m);
    const celebrity = lagEstimate(100, base, m);
    expect(celebrity).toBeGreaterThan(ordinary * 10);
    expect(celebrity).toBeCloseTo(((1 - 0.01 / (6 / 300)) * 600_000) / (100 * 5000 - 300), 9);
  });

  test('a named account\'s audience grows with the users, as its largest post does; an ordinary one\'s with the follows', () => {
    const named = pushWith((y) => y.replace('{ count: 2, followers: 0.3, name: star }', '{ count: 8, followers: 0.5, name: star }').replace(/events:\n.*\n.*\n/, ''));
    const graph = scenarioGraph(named);
    const policy = basePolicy(named);
    const point = likelyPoint(named, graph);
    const w = measureWorkload(prepare(named, graph), policy, point);
    const one = loadAt(w, named, policy, point, 1);
    const two = loadAt(w, named, policy, point, 2);
    expect(two.audienceP99 / one.audienceP99).toBeCloseTo(2, 9);
    expect(w.audienceP99Named).toBe(true);
    expect(two.largestPost / one.largestPost).toBeCloseTo(2, 9);
    expect(one.namedWritesRunMean).toBeCloseTo(one.namedWritesMean * peakFactors(named).runMean, 9);

    const ordinary = load('plan-small.yaml');
    const og = scenarioGraph(ordinary);
    const op = likelyPoint(ordinary, og);
    const ow = measureWorkload(prepare(ordinary, og), basePolicy(ordinary), op);
    expect(ow.audienceP99Named).toBe(false);
    expect(loadAt(ow, ordinary, basePolicy(ordinary), op, 2).audienceP99).toBe(loadAt(ow, ordinary, basePolicy(ordinary), op, 1).audienceP99);
    expect(lagModel(ordinary).batchSize).toBe(1000);
  });
});

describe('the words', () => {
  test('count right: "1 worker", "1 shard", "1 Redis shard"', () => {
    const doc = plan(load('plan-small.yaml'));
    expect(resource(doc, 'fanoutWorkers').values.p50).toBe(1);
    const text = [doc.binding.reason, ...doc.binding.constraints.map((c) => c.limit), ...doc.whatIfs.map((w) => w.text), ...doc.resources.map((r) => r.reason), doc.designPoint?.text ?? ''].join('\n');
    expect(text).not.toMatch(/\b1 (workers|shards|partitions|nodes|instances|replicas|Redis shards|fan-out workers)\b/);
    expect(doc.binding.constraints.find((c) => c.id === 'lag')!.limit).toMatch(/ with 1 worker$/);
  });

  test('say no shard count meets the read p99 rather than "memory sets it"', () => {
    const doc = plan(load('plan-small.yaml'), { growth: 1000 });
    const reason = resource(doc, 'redisShards').reason;
    expect(reason).toMatch(/reads: no shard count meets the read p99 of 100 ms .*; so memory alone sets the count: [\d,]+ shards, the busiest \d+% busy, read p99 unbounded \(over the objective of 100 ms\)$/);
    expect(reason).not.toMatch(/memory sets it/);
  });

  test('the memory constraint names the limit that fails first, and when the other would', () => {
    const tight = pushWith((y) => y.replace('redisMemory: 1TB', 'redisMemory: 10GB'));
    const doc = plan(tight);
    const memory = doc.binding.constraints.find((c) => c.id === 'memory')!;
    expect(doc.binding.constraint).toBe('memory');
    expect(memory.limit).toMatch(/^the 10 GB budget for timelines and lists is reached \(the \d+ shards \(\d+ nodes with replicas\) would be full at [\d.]+x\)$/);
    expect(doc.binding.reason).toMatch(/^Redis memory binds: the planned fleet holds 0\.\d+x the planned load before the 10 GB budget/);
    const roomy = plan(pushWith((y) => y.replace('redisMemory: 1TB', 'redisMemory: 200GB')));
    expect(roomy.binding.constraints.find((c) => c.id === 'memory')!.limit).toMatch(/^\d+ shards \(\d+ nodes with replicas\) of 64 GB are full \(the 200 GB budget would be reached at [\d.]+x\)$/);
  });
});
