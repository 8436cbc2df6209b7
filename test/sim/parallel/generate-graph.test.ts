// A graph generated on worker threads (sim/parallel/generate-graph.ts, from the built code: the
// threads run dist/): from 16M followee slots it is drawn in blocks, and it is the same bytes on any number
// of threads as on this one, keeps the generator's promises (no self-loops or duplicates, the mean
// follows, the tail's exponent, the planned head, exact celebrities), and its progress only moves
// forward, stage by stage, to 1.
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { DRAW_BLOCKS } from '../../../sim/graph/followees.js';
import { generateGraph, generation, type GenerateParams, type GenerationStep } from '../../../sim/graph/generate.js';
import type { FollowerGraph } from '../../../sim/graph/graph.js';
import { followerTargets } from '../../../sim/graph/popularity.js';
import { fitPowerLawTail } from '../../../sim/graph/powerlaw.js';
import { degreeHistogram } from '../../../sim/graph/stats.js';
import { scenarioGraph } from '../../../sim/run-scenario.js';
import { loadScenario } from '../../../sim/scenario/load.js';
import { ROOT } from '../../cli/cli-helpers.js';
import { expectWellFormed, followees, followers } from '../../graph/helpers.js';

type OnThreads = typeof import('../../../sim/parallel/generate-graph.js');
type ScenarioOnThreads = typeof import('../../../sim/parallel/scenario-graph.js');

// 400k users following 45 on average: 18M followee slots, over BLOCKS_FROM_SLOTS (sim/graph/followees.ts)
const p: GenerateParams = { users: 400_000, avgFollows: 45, alpha: 2.1, maxFollows: 5000, followsSigma: 1, seed: 3, celebrities: [{ count: 1, followers: 0.3, name: 'star' }] };
const ARRAYS = ['followerOffsets', 'followerIds', 'followeeOffsets', 'followeeIds'] as const;

function same(a: FollowerGraph, b: FollowerGraph): boolean {
  return a.edges === b.edges && ARRAYS.every((k) => Buffer.from(a[k].buffer, a[k].byteOffset, a[k].byteLength).equals(Buffer.from(b[k].buffer, b[k].byteOffset, b[k].byteLength)));
}

let onThreads: OnThreads;
let scenarioOnThreads: ScenarioOnThreads;
let here: FollowerGraph;
beforeAll(async () => {
  onThreads = (await import(pathToFileURL(join(ROOT, 'dist/sim/parallel/generate-graph.js')).href)) as OnThreads;
  scenarioOnThreads = (await import(pathToFileURL(join(ROOT, 'dist/sim/parallel/scenario-graph.js')).href)) as ScenarioOnThreads;
  here = generateGraph(p);
});

describe('generateGraphOnThreads', () => {
  it('draws a graph of 16M followee slots or more in blocks, the same bytes on 2 and 3 threads as on this one', async () => {
    // the plan the generation draws from has DRAW_BLOCKS blocks
    const first = generation(p, () => {}, (n) => new Uint32Array(n)).next().value as GenerationStep;
    expect(first.kind === 'draw' && first.plan.blockStarts.length).toBe(DRAW_BLOCKS + 1);
    expect(DRAW_BLOCKS).toBeGreaterThan(1);
    // generator version 2's bytes for these parameters, taken at bb00daa (2026-12-07): a change to
    // the draws that moves them is a new generator version
    const digest = ARRAYS.reduce((c, k) => crc32(Buffer.from(here[k].buffer, here[k].byteOffset, here[k].byteLength), c), 0);
    expect([here.edges, digest.toString(16)]).toEqual([18_163_794, 'd4de621b']);
    const said: [number, string][] = [];
    const two = await onThreads.generateGraphOnThreads(p, 2, (f, d) => said.push([f, d]));
    expect(same(here, two)).toBe(true);
    expect(same(here, await onThreads.generateGraphOnThreads(p, 3))).toBe(true);
    // another seed, another graph
    expect(same(here, await onThreads.generateGraphOnThreads({ ...p, seed: 4 }, 2))).toBe(false);

    // the progress only moves forward, through the stages in order, to 1
    for (let i = 1; i < said.length; i++) expect(said[i][0]).toBeGreaterThanOrEqual(said[i - 1][0]);
    const stages = said.map(([, d]) => d).filter((d, i, all) => i === 0 || all[i - 1] !== d);
    expect(stages).toEqual(['drawing followees', 'celebrities', 'sorting followee lists', 'building follower lists', 'done']);
    expect(said.filter(([, d]) => d === 'drawing followees').length).toBeGreaterThan(2);
    expect(said.at(-1)).toEqual([1, 'done']);
  });

  it("makes a scenario's graph on threads when it is drawn in blocks, the same bytes as on this thread", async () => {
    // steady-state's graph, made as large as the one above (its celebrities, its seed)
    const sc = loadScenario(join(ROOT, 'scenarios/steady-state.yaml'));
    if (sc.graph.kind !== 'generate') throw new Error('steady-state generates its graph');
    const large = { ...sc, seed: p.seed, graph: { ...sc.graph, users: p.users, avgFollows: p.avgFollows, alpha: p.alpha, maxFollows: p.maxFollows, followsSigma: p.followsSigma, celebrities: p.celebrities } };
    expect(same(here, await scenarioOnThreads.scenarioGraphOnThreads(large, 2))).toBe(true);
    // a graph under BLOCKS_FROM_SLOTS: the same graph whatever the threads
    const small = { ...large, graph: { ...large.graph, users: 20_000, avgFollows: 30 } };
    expect(same(scenarioGraph(small), await scenarioOnThreads.scenarioGraphOnThreads(small, 2))).toBe(true);
    expect(same(scenarioGraph(small), here)).toBe(false);
  });

  it('keeps the generator\'s promises in blocks: well formed, the mean, the tail, the head, the celebrity', () => {
    expectWellFormed(here);
    expect(Math.abs(here.edges / p.users - 45 - 0.3) / 45).toBeLessThan(0.03);
    const fit = fitPowerLawTail(degreeHistogram(here.followerOffsets))!;
    expect(Math.abs(fit.alpha - p.alpha)).toBeLessThan(0.1);
    const star = p.users - 1;
    expect(here.names.get(star)).toBe('star');
    expect(followers(here, star)).toBe(0.3 * p.users);
    // the most followed ordinary accounts got the counts they were planned, within Poisson noise
    const counts = Array.from({ length: star }, (_, a) => followers(here, a)).sort((x, y) => y - x);
    let following = 0;
    for (let u = 0; u < p.users; u++) if (followees(here, u) > 0) following++;
    const planned = followerTargets(star, p.alpha, here.edges - 0.3 * p.users, following - 1);
    for (const rank of [0, 1, 2, 5, 10, 30, 100, 300, 1000]) expect(Math.abs(counts[rank] - planned[rank])).toBeLessThan(4 * Math.sqrt(planned[rank]) + 2);
  });
});
