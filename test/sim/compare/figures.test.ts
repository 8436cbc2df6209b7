// Reading the figures from real documents: a simulation of replay-events run in-process, and the two
// saved replays of that scenario (real measurements of the reference server).
import { describe, expect, it } from 'vitest';
import { FIGURES, figureDef, readFigure, type FigureId } from '../../../sim/compare/figures.js';
import type { RunResult } from '../../../sim/result.js';
import { savedReplay, simulatedEvents } from './documents.js';

const value = (id: FigureId, r: RunResult) => readFigure(figureDef(id)!, r);

describe('figures of a simulation', () => {
  const sim = simulatedEvents();
  const s = sim.summary;

  it('reads lag, writes, reads and commands from the summary, lags per follower being the SLO\'s', () => {
    expect(sim.source).toBe('simulate');
    expect(value('lag_p50', sim)).toEqual({ value: s.fanout.followerLagSeconds.p50 });
    expect(value('lag_p99', sim)).toEqual({ value: s.fanout.followerLagSeconds.p99 });
    expect(value('lag_max', sim)).toEqual({ value: s.fanout.followerLagSeconds.max });
    expect(value('post_lag_p99', sim)).toEqual({ value: s.fanout.lagSeconds.p99 });
    expect(value('writes_per_second_mean', sim)).toEqual({ value: s.fanout.writesPerSecond.mean });
    expect(value('writes_per_second_peak', sim)).toEqual({ value: s.fanout.writesPerSecond.peak });
    expect(value('deliveries_per_post', sim)).toEqual({ value: s.fanout.deliveriesPerPost });
    expect(value('read_p50', sim)).toEqual({ value: s.reads.latencyMs.p50 });
    expect(value('read_p99', sim)).toEqual({ value: s.reads.latencyMs.p99 });
    // over sessions' first pages, as a replay measures it
    expect(value('commands_per_read', sim)).toEqual({ value: s.reads.redisOpsPerRead.firstPages });
    const old = structuredClone(sim);
    delete old.summary.reads.redisOpsPerRead.firstPages;
    expect(value('commands_per_read', old)).toEqual({ value: s.reads.redisOpsPerRead.mean });
    // the API tier's CPU before the shared cores stretch it; none in a document from before it was kept
    expect(value('api_cpu', sim)).toEqual({ value: s.api!.cpuCores });
    const noApi = structuredClone(sim);
    delete noApi.summary.api;
    expect(value('api_cpu', noApi)).toEqual({ value: null, why: 'not in the document' });
    // a real run: every one of these is a positive number
    for (const id of ['lag_p99', 'writes_per_second_mean', 'read_p99', 'commands_per_read', 'api_cpu'] as FigureId[]) expect(value(id, sim).value).toBeGreaterThan(0);
  });

  it("reads a large post's writes per timeline from the stages, and none from a document older than it", () => {
    const stages = s.fanout.stagesSeconds!;
    const doc = structuredClone(sim);
    doc.summary.fanout.stagesSeconds = { ...stages, largeWritesPerTimeline: { mean: 3.2e-5, p50: 3.1e-5, p90: 4e-5, p99: 4.4e-5, p999: 4.4e-5, max: 4.4e-5 } };
    expect(value('stage_large_writes_per_timeline_p50', doc)).toEqual({ value: 3.1e-5 });
    // a run without a post of 300 timelines: none, and said so (this small world has none)
    expect(stages.largeWritesPerTimeline!.p50).toBeNaN();
    expect(value('stage_large_writes_per_timeline_p50', sim)).toEqual({ value: null, why: 'no post of 300 timelines or more' });
    const older = structuredClone(sim);
    delete older.summary.fanout.stagesSeconds!.largeWritesPerTimeline;
    expect(value('stage_large_writes_per_timeline_p50', older)).toEqual({ value: null, why: 'not in the document' });
  });

  it('reads timelines and lists as a replay counts its keys (MEMORY USAGE); the other key classes are not modelled', () => {
    const timelines = value('memory_timelines_bytes', sim).value!;
    const lists = value('memory_lists_bytes', sim).value!;
    const own = value('memory_own_lists_bytes', sim).value!;
    expect(timelines).toBe(s.redis.usageBytes!.timelines);
    expect(lists).toBe(s.redis.usageBytes!.lists);
    expect(own).toBe(s.redis.usageBytes!.ownLists);
    expect(own).toBeGreaterThan(0);
    expect(value('memory_bytes', sim).value).toBeCloseTo(timelines + lists + own, 6);
    // used_memory terms count the skiplists' allocator overhead on top: up to 6.4% more
    expect(timelines + lists).toBeLessThan(s.redis.memoryBytes.end);
    expect(timelines + lists).toBeGreaterThan(s.redis.memoryBytes.end / 1.07);
    for (const id of ['memory_total_bytes', 'memory_bodies_bytes', 'memory_event_log_bytes', 'memory_other_bytes'] as FigureId[]) {
      expect(value(id, sim).value, id).toBeNull();
      expect(value(id, sim).why, id).toMatch(/not modelled/);
    }
    // a document from before the usage figures: the end less the lists, in used_memory terms
    const old = structuredClone(sim);
    delete old.summary.redis.usageBytes;
    expect(value('memory_timelines_bytes', old).value).toBeCloseTo(s.redis.memoryBytes.end - s.redis.listBytes, 6);
    expect(value('memory_lists_bytes', old).value).toBe(s.redis.listBytes);
  });

  it('a figure the document has as NaN or null stays null, never 0', () => {
    const nan = structuredClone(sim);
    nan.summary.reads.latencyMs.p99 = NaN;
    (nan.summary.reads.redisOpsPerRead as { mean: number | null; firstPages: number | null }).mean = null;
    (nan.summary.reads.redisOpsPerRead as { mean: number | null; firstPages: number | null }).firstPages = null;
    expect(value('read_p99', nan)).toEqual({ value: null, why: 'not in the document' });
    expect(value('commands_per_read', nan)).toEqual({ value: null, why: 'not in the document' });
  });
});

describe('figures of a replay', () => {
  const replay = savedReplay(0);
  const m = replay.replay!.memory;
  const withKeyspace = (c: keyof typeof m.classes) => m.classes[c].bytes + m.classes[c].keys * m.keyspaceBytesPerKey;

  it("reads its lags, hop and pickup p99 on whole-millisecond clocks, its pulled posts' lags to half a poll where the server did not time them", () => {
    const step = (id: FigureId, r: RunResult) => figureDef(id)!.resolution?.(r) ?? null;
    // 104 pushed posts, nothing pulled: the workers' ms stamps
    for (const id of ['lag_p50', 'lag_p99', 'lag_max', 'post_lag_p99', 'stage_post_to_log_p50', 'stage_post_to_log_p99', 'stage_pickup_p99'] as FigureId[]) expect(step(id, replay), id).toBe(0.001);
    // a mean of such differences is not a step off; the stages on performance.now() and the reads are fine
    for (const id of ['stage_pickup_mean', 'stage_statements_p50', 'stage_writes_p99', 'stage_large_writes_per_timeline_p50', 'read_p99'] as FigureId[]) expect(step(id, replay), id).toBeNull();
    // pulled posts only: timed by the server, finer than a ms; 2 of 10 untimed, half of a 25 ms poll
    const pulled = structuredClone(replay);
    pulled.summary.posts = { ...pulled.summary.posts, pushed: 0, pulled: 10 };
    pulled.replay!.fanout.probes = { ...pulled.replay!.fanout.probes, pulledPosts: 10, pulledTimed: 10, pollMs: 25 };
    expect(step('lag_p99', pulled)).toBeNull();
    pulled.replay!.fanout.probes.pulledTimed = 8;
    expect(step('lag_p99', pulled)).toBe(0.0125);
    // a simulation's clock is continuous
    expect(step('lag_p99', simulatedEvents())).toBeNull();
  });

  it('reads memory by key class, MEMORY USAGE with the keyspace entry of each key, adding up to the memory at the end', () => {
    // the feeds' keys, which a simulation counts too: timelines and both kinds of lists
    const feeds = ['timelines', 'pulledLists', 'ownLists'].reduce((a, c) => a + withKeyspace(c as Parameters<typeof withKeyspace>[0]), 0);
    expect(value('memory_bytes', replay).value).toBeCloseTo(feeds, 6);
    expect(value('memory_timelines_bytes', replay)).toEqual({ value: withKeyspace('timelines') });
    expect(value('memory_timelines_bytes', replay).value).toBe(43_989_624 + 526 * 56);
    expect(value('memory_lists_bytes', replay)).toEqual({ value: withKeyspace('pulledLists') });
    expect(value('memory_own_lists_bytes', replay)).toEqual({ value: withKeyspace('ownLists') });
    expect(value('memory_bodies_bytes', replay)).toEqual({ value: withKeyspace('bodies') });
    expect(value('memory_event_log_bytes', replay)).toEqual({ value: withKeyspace('eventLog') });
    expect(value('memory_other_bytes', replay)).toEqual({ value: withKeyspace('other') });
    const classes = ['memory_timelines_bytes', 'memory_lists_bytes', 'memory_own_lists_bytes', 'memory_bodies_bytes', 'memory_event_log_bytes', 'memory_other_bytes'] as FigureId[];
    const sum = classes.reduce((a, id) => a + value(id, replay).value!, 0);
    // every class adds up to the memory at the end (the document holds 6 significant digits)
    expect(Math.abs(sum - value('memory_total_bytes', replay).value!) / sum).toBeLessThan(1e-5);
  });

  it('reads the lags, rates and reads the replay measured', () => {
    expect(value('lag_p99', replay)).toEqual({ value: 0.066047 });
    expect(value('read_p99', replay)).toEqual({ value: 571.903 });
    expect(value('writes_per_second_peak', replay)).toEqual({ value: 143 });
    expect(value('commands_per_read', replay)).toEqual({ value: 6.15701 });
    // the server process's CPU share of a core over the window, in cores
    expect(value('api_cpu', replay)).toEqual({ value: replay.replay!.cpu.share!.server / 100 });
    expect(value('api_cpu', replay).value).toBeGreaterThan(0);
  });

  it('says "not measured" for what a replay leaves null, and for a document without its replay section', () => {
    const unmeasured = structuredClone(replay);
    (unmeasured.summary.reads.redisOpsPerRead as { mean: number | null; firstPages?: number | null }).mean = null; // no reads-only window
    (unmeasured.summary.reads.redisOpsPerRead as { mean: number | null; firstPages?: number | null }).firstPages = null;
    expect(value('commands_per_read', unmeasured)).toEqual({ value: null, why: 'not measured' });
    delete unmeasured.replay;
    expect(value('memory_timelines_bytes', unmeasured)).toEqual({ value: null, why: 'not measured' });
    expect(value('memory_bytes', unmeasured)).toEqual({ value: null, why: 'not measured' });
    expect(value('memory_total_bytes', unmeasured).value).toBe(replay.summary.redis.memoryBytes.end);
  });

  it('every figure has a distinct id, a label, a unit and a definition', () => {
    expect(new Set(FIGURES.map((f) => f.id)).size).toBe(FIGURES.length);
    for (const f of FIGURES) {
      expect(f.label.length, f.id).toBeGreaterThan(5);
      expect(f.about.length, f.id).toBeGreaterThan(10);
    }
  });
});
