// The plan's domain code: determinism, the closed forms against core/redis-memory and hand
// computations, growth scaling, and the simulation check of the fan-out fleet.
import { describe, expect, test } from 'vitest';
import { timelineInstanceBytes } from '../../core/redis-memory.js';
import { likelyPoint, planSettings } from '../../sim/plan/inputs.js';
import { evaluatePoint, type PlanContext } from '../../sim/plan/resources.js';
import { measureWorkload } from '../../sim/plan/workload.js';
import { basePolicy, prepare, runPolicy, scenarioGraph } from '../../sim/run-scenario.js';
import { stringifyResult } from '../../sim/result.js';
import { parseScenario } from '../../sim/scenario/load.js';
import type { Scenario } from '../../sim/scenario/types.js';
import { load, plan, resource } from './helpers.js';


function context(sc: Scenario, growth = 1): PlanContext {
  return { scenario: sc, policy: basePolicy(sc), settings: planSettings(sc), growth, headroom: 0.3 };
}

describe('a sampled plan', () => {
  const sc = load('plan-small.yaml');
  const doc = plan(sc);

  test('is deterministic: same scenario and seed, byte-identical document; another seed, other draws', () => {
    expect(stringifyResult(plan(load('plan-small.yaml')))).toBe(stringifyResult(doc));
    const other = plan({ ...load('plan-small.yaml'), seed: 8 });
    expect(other.inputs.find((i) => i.key === 'population')!.sampled).not.toEqual(doc.inputs.find((i) => i.key === 'population')!.sampled);
  });

  test('reports p5 <= p50 <= p95 for every resource, and the sampled inputs within their intervals', () => {
    expect(doc.schema).toBe('feedlab.plan/1');
    expect(doc.sampled).toBe(true);
    expect(doc.columns.map((c) => c.key)).toEqual(['p5', 'p50', 'p95']);
    expect(doc.resources.map((r) => r.id)).toEqual(['fanoutWorkers', 'redisMemory', 'redisShards', 'redisNodes', 'partitions', 'apiInstances', 'postgresConnections']);
    for (const r of [...doc.resources, ...doc.workload]) {
      expect(r.values.p5, r.id).toBeLessThanOrEqual(r.values.p50);
      expect(r.values.p50, r.id).toBeLessThanOrEqual(r.values.p95);
      expect(typeof r.display.p50).toBe('string');
    }
    for (const r of doc.resources) expect(r.reason.length, r.id).toBeGreaterThan(40);
    const pop = doc.inputs.find((i) => i.key === 'population')!;
    expect(pop).toMatchObject({ path: 'population', low: 1.6e6, likely: 2e6, high: 2.6e6 });
    expect(pop.sampled.p5).toBeGreaterThanOrEqual(1.6e6);
    expect(pop.sampled.p95).toBeLessThanOrEqual(2.6e6);
    // the memory grows with the sampled users and posts: p95 well above p5
    expect(resource(doc, 'redisMemory').values.p95).toBeGreaterThan(resource(doc, 'redisMemory').values.p5 * 1.2);
    // two simulation checks, at the p50 and p95 samples, each meeting the lag objective
    expect(doc.check.map((c) => c.quantile)).toEqual(['p50', 'p95']);
    for (const c of doc.check) expect(c.pass).toBe(true);
    expect(doc.satisfied).toBe(true);
  });

  test('names the binding constraint with its load multiple, and what-ifs with real numbers', () => {
    expect(['memory', 'lag', 'readLatency']).toContain(doc.binding.constraint);
    const multiples = doc.binding.constraints.map((c) => c.loadMultiple);
    const binding = doc.binding.constraints.find((c) => c.id === doc.binding.constraint)!;
    expect(binding.loadMultiple).toBe(Math.min(...multiples));
    expect(binding.loadMultiple).toBeGreaterThan(1); // the plan has headroom
    const cap = doc.whatIfs.find((w) => w.knob === 'policy.timelineCap')!;
    expect(cap.to).toBe('400');
    const mem = cap.figures.find((f) => f.id === 'timelineMemory')!;
    expect(mem.to).toBeLessThan(mem.from);
    const lag = cap.figures.find((f) => f.id === 'lagP99')!;
    expect(lag.to).toBe(lag.from); // the cap does not touch the fan-out
    expect(cap.text).toMatch(/^a timeline cap of 400 instead of 800 cuts timeline memory by \d+% \([\d.]+ GB -> [\d.]+ GB\).*lag.* unchanged$/);
  });
});

describe('closed forms', () => {
  test('timeline memory follows core/redis-memory: full timelines cost timelineInstanceBytes(cap) each', () => {
    // 1,000 posts a day each: every timeline with a followee fills to the cap within the 7-day lease
    const sc = parseScenario(
      'name: full\nseed: 3\nduration: 10m\npopulation: 50000\ngraph: { generate: { users: 5000, avgFollows: 10, alpha: 2.3 } }\nactivity: { postsPerUserPerDay: 1000, dormantShare: 0, diurnal: none }\npolicy: { kind: push }\n',
      'full.yaml',
    );
    const graph = scenarioGraph(sc);
    const prepared = prepare(sc, graph);
    const w = measureWorkload(prepared, basePolicy(sc), likelyPoint(sc, graph));
    const f = evaluatePoint(w, context(sc), likelyPoint(sc, graph));
    let expected = 0;
    for (let u = 0; u < graph.users; u++) {
      const follows = graph.followeeOffsets[u + 1] - graph.followeeOffsets[u];
      expected += 10 * (follows > 0 ? timelineInstanceBytes(800) : timelineInstanceBytes(1));
    }
    expect(f.memory.timelineBytes).toBeCloseTo(expected, 0);
    expect(f.memory.timelines).toBeCloseTo(50_000, 6);
  });

  test("the closed-form timeline and list memory is the simulator's at the start of the run", () => {
    const sc = load('plan-small.yaml');
    const graph = scenarioGraph(sc);
    const prepared = prepare(sc, graph);
    const point = likelyPoint(sc, graph);
    const f = evaluatePoint(measureWorkload(prepared, basePolicy(sc), point), context(sc), point);
    const sim = runPolicy(prepared, basePolicy(sc));
    const closed = f.memory.timelineBytes + f.memory.listBytes;
    expect(Math.abs(closed / sim.series.memoryBytes[0] - 1)).toBeLessThan(0.02);
  });

  test('growth multiplies the load and the memory, and the resources follow', () => {
    const sc = load('plan-small.yaml');
    const graph = scenarioGraph(sc);
    const point = likelyPoint(sc, graph);
    const w = measureWorkload(prepare(sc, graph), basePolicy(sc), point);
    const one = evaluatePoint(w, context(sc, 1), point);
    const two = evaluatePoint(w, context(sc, 2), point);
    for (const k of ['postsPeak', 'writesPeak', 'pagesPeak', 'listWritesPeak'] as const) expect(two.load[k] / one.load[k]).toBeCloseTo(2, 9);
    expect(two.memory.timelines / one.memory.timelines).toBeCloseTo(2, 9);
    expect(two.memory.timelineBytes / one.memory.timelineBytes).toBeCloseTo(2, 9);
    expect(two.redis.usedBytes / one.redis.usedBytes).toBeCloseTo(2, 6);
    expect(two.api.offeredCores / one.api.offeredCores).toBeCloseTo(2, 9);
    expect(two.fanout.throughput).toBeGreaterThanOrEqual(one.fanout.throughput);
  });

  test("API instances are Little's law with square-root staffing over the peak pages, at the simulator's CPU per page", () => {
    const sc = load('plan-small.yaml');
    const graph = scenarioGraph(sc);
    const point = likelyPoint(sc, graph);
    const f = evaluatePoint(measureWorkload(prepare(sc, graph), basePolicy(sc), point), context(sc), point);
    // infrastructure.api's defaults: 300 us a page, 20 us a merged list (the timeline, the own list, the pulled ones), 10 us a post
    const cpu = 0.0003 + 0.00002 * (2 + f.load.listsPerPage) + 0.00001 * sc.activity.pageSize;
    const a = f.load.pagesPeak * cpu;
    expect(f.api.offeredCores).toBeCloseTo(a, 9);
    expect(f.api.staffedCores).toBe(Math.ceil(a + 2.375 * Math.sqrt(a)));
    expect(f.api.instances).toBe(Math.ceil(Math.ceil(f.api.staffedCores / 0.7) / 1));
  });

  test("a page pays api.idleCpu the headroom's share of the time, and each instance's background is not the pages'", () => {
    const sc = load('plan-small.yaml');
    const graph = scenarioGraph(sc);
    const point = likelyPoint(sc, graph);
    const w = measureWorkload(prepare(sc, graph), basePolicy(sc), point);
    const base = evaluatePoint(w, context(sc), point);
    sc.infrastructure.api = { ...sc.infrastructure.api!, idleOverhead: 0.002, idleCpu: 0.001, backgroundCpu: 0.07 };
    const f = evaluatePoint(w, context(sc), point);
    // at 70% busy a page finds the tier idle 30% of the time: 0.3 ms more CPU
    const cpu = base.api.offeredCores / base.load.pagesPeak + 0.3 * 0.001;
    expect(f.api.offeredCores).toBeCloseTo(base.load.pagesPeak * cpu, 9);
    // an instance of one core, 70% busy, gives the pages 0.7 less its 0.07 of background
    expect(f.api.instances).toBe(Math.ceil(f.api.staffedCores / (0.7 - 0.07) - 1e-9));
    expect(f.api.instances).toBeGreaterThan(base.api.instances);
  });
});

describe('the simulation check', () => {
  test('the planned fan-out fleet meets the lag objective in the simulator, and half of it does not', () => {
    const sc = load('plan-push.yaml');
    const doc = plan(sc);
    expect(doc.sampled).toBe(false);
    const workers = resource(doc, 'fanoutWorkers').values.p50;
    const check = doc.check[0];
    expect(check.workers).toBe(workers);
    expect(check.pass).toBe(true);
    expect(check.runs[check.runs.length - 1]).toMatchObject({ workers, pass: true });
    // a celebrity burst pushed to 600k followers: the lag, not the write rate, sizes the fleet
    expect(workers).toBeGreaterThan(5);
    expect(doc.binding.constraint).toBe('lag');
    // the same simulation, run independently with the plan's workers, meets the objective
    const graph = scenarioGraph(sc);
    const withWorkers = (n: number) => runPolicy(prepare({ ...sc, infrastructure: { ...sc.infrastructure, fanoutWorkers: n } }, graph), basePolicy(sc));
    expect(withWorkers(workers).summary.fanout.followerLagSeconds.p99).toBeLessThanOrEqual(sc.slo.fanoutLagP99);
    expect(withWorkers(Math.floor(workers / 2)).summary.fanout.followerLagSeconds.p99).toBeGreaterThan(sc.slo.fanoutLagP99);
  });

  test('a plan that cannot meet the memory budget says so', () => {
    const sc = load('plan-push.yaml');
    const doc = plan({ ...sc, slo: { ...sc.slo, redisMemory: 1e9 } });
    expect(doc.satisfied).toBe(false);
    expect(doc.problems.join('\n')).toMatch(/Redis memory budget of 1 GB: timelines and lists need [\d.]+ GB at p95/);
  });
});
