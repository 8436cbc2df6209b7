// The shipped scenarios run, and twitter-2012 lands on the published figures.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadScenario } from '../../sim/scenario/load.js';
import { policyFor, prepare, runPolicy, scenarioGraph } from '../../sim/run-scenario.js';

const SCENARIOS = join(import.meta.dirname, '../../scenarios');

function runFile(file: string, policy?: string) {
  const sc = loadScenario(join(SCENARIOS, file));
  const prepared = prepare(sc, scenarioGraph(sc));
  return runPolicy(prepared, policyFor(sc, policy));
}

describe('twitter-2012 (Timelines at Scale, QCon SF 2012)', () => {
  const r = runFile('twitter-2012.yaml');
  const s = r.summary;

  it('posts ~4.6k tweets/s and serves ~300k timeline reads/s on 150M users', () => {
    expect(r.scenario.population).toBe(150_000_000);
    expect(Math.abs(s.posts.perSecond.mean - 4630) / 4630).toBeLessThan(0.05);
    expect(Math.abs(s.reads.perSecond.mean - 300_000) / 300_000).toBeLessThan(0.02);
  });

  it('reaches ~75 followers per tweet: ~345k timeline writes/s', () => {
    expect(Math.abs(s.fanout.deliveriesPerPost - 75) / 75).toBeLessThan(0.06);
    expect(Math.abs(s.fanout.writesPerSecond.mean - 345_000) / 345_000).toBeLessThan(0.06);
  });

  it('takes minutes to push one tweet of a 31M-follower account (the talk: up to 5)', () => {
    // the largest lag is that tweet's: 31M writes on its 20-worker pool at 5,000 writes/s each
    expect(s.fanout.lagSeconds.max).toBeGreaterThan(4 * 60);
    expect(s.fanout.lagSeconds.max).toBeLessThan(6 * 60);
    expect(s.fanout.lagSeconds.max).toBeCloseTo(31e6 / 100_000, -1);
    // while ordinary tweets, on their own workers, stay well inside the 5 s target
    expect(s.fanout.lagSeconds.p99).toBeLessThan(5);
  });

  it('holds timelines at ~5x the documents 24 B per entry', () => {
    expect(s.redis.naiveUnderestimate).toBeGreaterThan(4.5);
    expect(s.redis.naiveUnderestimate).toBeLessThan(6);
  });
});

describe('every shipped scenario', () => {
  it('loads, runs and reports', () => {
    const files = readdirSync(SCENARIOS).filter((f) => f.endsWith('.yaml'));
    expect(files.sort()).toEqual(['breaking-news.yaml', 'celebrity-burst.yaml', 'cold-start-storm.yaml', 'fault-drill.yaml', 'plan-next-year.yaml', 'soak.yaml', 'steady-state.yaml', 'threshold-sweep.yaml', 'twitter-2012.yaml']);
  });

  it('celebrity-burst: push falls minutes behind; the 25k threshold keeps the lag SLO', () => {
    const hybrid = runFile('celebrity-burst.yaml');
    const push = runFile('celebrity-burst.yaml', 'push');
    expect(hybrid.summary.slo.checks.find((c) => c.id === 'fanoutLagP99')!.pass).toBe(true);
    expect(push.summary.fanout.lagSeconds.p99).toBeGreaterThan(5 * 60);
    // ten 50M-follower posts, 40% of whose followers are active: 200M writes more than hybrid
    expect(push.summary.fanout.deliveries - hybrid.summary.fanout.deliveries).toBeGreaterThan(2e8);
  });

  it('cold-start-storm: the storm and the lost shard make cold reads, rebuilt from Postgres', () => {
    const r = runFile('cold-start-storm.yaml');
    const cold = r.series.coldReadsPerSecond;
    expect(cold.slice(0, 30).every((x) => x === 0)).toBe(true);
    expect(Math.max(...cold.slice(30, 40))).toBeGreaterThan(0);
    expect(Math.max(...cold.slice(80, 90))).toBeGreaterThan(0);
    expect(r.series.memoryBytes[80]).toBeLessThan(r.series.memoryBytes[78] * 0.97);
  });

  it('breaking-news: the backlog builds in the window and drains after it', () => {
    const r = runFile('breaking-news.yaml');
    const backlog = r.series.backlogWrites;
    expect(Math.max(...backlog.slice(30, 41))).toBeGreaterThan(10 * Math.max(1, ...backlog.slice(0, 29)));
    expect(backlog[backlog.length - 1]).toBeLessThan(Math.max(...backlog.slice(30, 41)) / 10);
  });

  it('steady-state: a day within its SLOs', () => {
    const r = runFile('steady-state.yaml');
    expect(r.scenario.durationSeconds).toBe(86_400);
    expect(r.summary.slo.pass).toBe(true);
  });
});
