// The feed rules server and simulator share (core/): on the same inputs both make the same
// decision. The server side is asked through its own entry points (its configuration, its event
// log, its worker's draw), the simulator's through a run.
import { describe, expect, it } from 'vitest';
import { ADAPTIVE_RECHECK_SECONDS, keepForReader, parsePolicy, postSalt, pullsAuthor, readerDraw, readPullThreshold, type FanoutPolicy } from '../../core/fanout-policy.js';
import { DEFAULT_EVENT_CONCURRENCY, DEFAULT_FANOUT_BATCH, DEFAULT_FOLLOWER_PAGE, DEFAULT_PIPELINES } from '../../core/fanout-worker.js';
import { authorPartition } from '../../core/partition.js';
import { DEFAULT_BACKLOG_BOUND, DEFAULT_MIN_THRESHOLD } from '../../core/timeline-rules.js';
import { partitionOf } from '../../server/events/event-log.js';
import { loadServeConfig } from '../../server/serve.js';
import { ADAPT_INTERVAL_MS } from '../../server/worker/fanout.js';
import { loadWorkerConfig } from '../../server/worker/config.js';
import { buildPopulation } from '../../sim/model/population.js';
import { simulate } from '../../sim/model/simulation.js';
import { basePolicy } from '../../sim/policy.js';
import { graphFromEdges, scenarioFrom } from '../model/fixtures.js';

const ENV = { FEED_TOKEN_SECRET: 'x'.repeat(32) } as NodeJS.ProcessEnv;
const SPECS = ['push', 'pull', 'threshold:0', 'threshold:3', 'threshold:25000', 'adaptive:3', 'reader-cap:2'];

describe('the pull decision', () => {
  it("the server's read path pulls exactly the authors the worker and the simulator pull, at every follower count", () => {
    for (const spec of SPECS) {
      const server = loadServeConfig({ policy: spec }, ENV);
      // the read path asks only of authors the reader follows: at least one follower each
      for (const followers of [1, 2, 3, 4, 24_999, 25_000, 25_001, 1e9]) {
        const decided = pullsAuthor(server.policy, followers, server.policy.threshold);
        expect(followers > server.readThreshold, `${spec} at ${followers}`).toBe(decided);
        expect(server.readThreshold).toBe(readPullThreshold(server.policy));
      }
    }
    // rate decides per pair from read rates no live process tracks: the API and the workers refuse it alike
    expect(() => loadServeConfig({ policy: 'rate' }, ENV)).toThrow(/the rate policy decides per \(author, reader\) pair/);
    expect(() => loadWorkerConfig({ policy: 'rate' }, ENV)).toThrow(/the rate policy decides per \(author, reader\) pair/);
  });

  it('a simulated run pulls the author over the threshold and pushes the one at it', () => {
    // author 6 has 4 followers, author 7 has 3; everyone else follows both
    const edges: Array<[number, number]> = [[0, 6], [1, 6], [2, 6], [3, 6], [0, 7], [1, 7], [2, 7]];
    const graph = graphFromEdges(8, edges);
    const sc = scenarioFrom('seed: 1\nduration: 10m\nactivity: { postsPerUserPerDay: 2000, sessionsPerUserPerDay: 0, dormantShare: 0, diurnal: none }\n', 8);
    const policy = parsePolicy('threshold:3', basePolicy(sc));
    const m = simulate({ scenario: sc, population: buildPopulation(graph, sc), policy });
    // every post of author 6 went to its list, every post of author 7 to 3 timelines
    expect(m.posts.pulled).toBeGreaterThan(0);
    expect(m.fanout.listWrites).toBe(m.posts.pulled);
    expect(m.fanout.deliveries).toBe(3 * m.posts.pushed);
    expect(pullsAuthor(policy, 4, 3)).toBe(true);
    expect(pullsAuthor(policy, 3, 3)).toBe(false);
  });
});

describe('the partition of an author', () => {
  it("is one function for the server's event log and the simulator", () => {
    for (const n of [1, 7, 16, 64]) for (let a = 0; a < 500; a += 7) expect(partitionOf(a, n)).toBe(authorPartition(a, n));
    // one author's events stay in one partition, and dense ids spread evenly
    const counts = new Array(16).fill(0);
    for (let a = 0; a < 1600; a++) counts[authorPartition(a, 16)]++;
    expect(counts).toEqual(new Array(16).fill(100));
  });
});

describe('the reader-side cap', () => {
  it('keeps about cap / follows of a heavy reader\'s deliveries, the same on every redelivery', () => {
    const policy: FanoutPolicy = { kind: 'reader-cap', threshold: 0, skipDormant: true, readerCap: 500, backlogBound: 1, minThreshold: 0 };
    const salt = postSalt('7340123456789012345');
    let kept = 0;
    const readers = 200_000;
    for (let r = 0; r < readers; r++) if (keepForReader(policy, 2_000, readerDraw(salt, r))) kept++;
    // binomial(200k, 0.25): sd 194, so 4 sd is 0.4% of the count
    expect(Math.abs(kept / readers - 0.25)).toBeLessThan(0.004);
    expect(readerDraw(salt, 42)).toBe(readerDraw(postSalt('7340123456789012345'), 42));
    expect(readerDraw(salt, 42)).not.toBe(readerDraw(postSalt('7340123456789012346'), 42));
  });
});

describe('defaults', () => {
  it("the adaptive policy re-checks its backlog at core's interval in the server's worker", () => {
    expect(ADAPT_INTERVAL_MS).toBe(ADAPTIVE_RECHECK_SECONDS * 1000);
  });

  it("the server's worker and a scenario's policy start from core's defaults", () => {
    const worker = loadWorkerConfig({}, ENV);
    const sc = scenarioFrom('seed: 1\n', 10);
    expect(worker.batchSize).toBe(DEFAULT_FANOUT_BATCH);
    expect(sc.infrastructure.batchSize).toBe(DEFAULT_FANOUT_BATCH);
    expect(worker.pipelines).toBe(DEFAULT_PIPELINES);
    expect(worker.eventConcurrency).toBe(DEFAULT_EVENT_CONCURRENCY);
    expect(worker.pageSize).toBe(DEFAULT_FOLLOWER_PAGE);
    expect(worker.policy.backlogBound).toBe(DEFAULT_BACKLOG_BOUND);
    expect(sc.policy.backlogBound).toBe(DEFAULT_BACKLOG_BOUND);
    expect(worker.policy.minThreshold).toBe(DEFAULT_MIN_THRESHOLD);
    expect(sc.policy.minThreshold).toBe(DEFAULT_MIN_THRESHOLD);
    const serve = loadServeConfig({}, ENV);
    expect(serve.policy).toEqual(worker.policy);
  });
});
