// Small hand-built graphs and scenarios for model tests, where the answer has a closed form.
import type { FollowerGraph } from '../../sim/graph/graph.js';
import { buildPopulation } from '../../sim/model/population.js';
import { simulate } from '../../sim/model/simulation.js';
import { basePolicy } from '../../sim/policy.js';
import { parseScenario } from '../../sim/scenario/load.js';
import type { Scenario } from '../../sim/scenario/types.js';

/** A graph from (follower, author) pairs; no checks beyond what CSR needs. */
export function graphFromEdges(users: number, edges: Array<[number, number]>, names: Array<[number, string]> = []): FollowerGraph {
  const build = (key: (e: [number, number]) => number, val: (e: [number, number]) => number) => {
    const offsets = new Uint32Array(users + 1);
    for (const e of edges) offsets[key(e) + 1]++;
    for (let i = 0; i < users; i++) offsets[i + 1] += offsets[i];
    const ids = new Uint32Array(edges.length);
    const cursor = offsets.slice(0, users);
    for (const e of edges) ids[cursor[key(e)]++] = val(e);
    return { offsets, ids };
  };
  const followers = build((e) => e[1], (e) => e[0]);
  const followees = build((e) => e[0], (e) => e[1]);
  return {
    users,
    edges: edges.length,
    followerOffsets: followers.offsets,
    followerIds: followers.ids,
    followeeOffsets: followees.offsets,
    followeeIds: followees.ids,
    names: new Map(names),
    provenance: { kind: 'test' },
  };
}

/** One author followed by every other user. */
export function starGraph(followers: number, named = false): FollowerGraph {
  const edges: Array<[number, number]> = [];
  for (let u = 0; u < followers; u++) edges.push([u, followers]);
  return graphFromEdges(followers + 1, edges, named ? [[followers, 'star']] : []);
}

/** `readers` readers each following all `authors` authors (ids readers .. readers+authors-1). */
export function bipartiteGraph(readers: number, authors: number): FollowerGraph {
  const edges: Array<[number, number]> = [];
  for (let u = 0; u < readers; u++) for (let a = 0; a < authors; a++) edges.push([u, readers + a]);
  return graphFromEdges(readers + authors, edges);
}

/** A scenario from YAML text for a hand-built graph of `users` users (the tests pass the graph itself). */
export function scenarioFrom(yaml: string, users: number): Scenario {
  const avgFollows = 1;
  return parseScenario(`name: test\ngraph:\n  generate: { users: ${users}, avgFollows: ${avgFollows} }\n${yaml}`, 'test.yaml');
}

/**
 * The star of `followers` followers posting `posts` times within `window` from 10 s on, nothing else
 * happening, on one consumer of the reference worker (push, no dormancy, no API tier, no hop):
 * `costs` is the inside of the costs map. Returns the simulation's figures.
 */
export function starBurst(costs: string, o: { followers?: number; posts?: number; window?: string; duration?: string; seed?: number; splitPosts?: boolean } = {}) {
  const followers = o.followers ?? 100;
  const sc = scenarioFrom(`seed: ${o.seed ?? 42}
duration: ${o.duration ?? '1m'}
activity:
  postsPerUserPerDay: 0
  sessionsPerUserPerDay: 0
  dormantShare: 0
  diurnal: none
events:
  - at: 10s
    celebrityBurst: { accounts: 1, window: ${o.window ?? '1ms'}, postsPerAccount: ${o.posts ?? 1} }
infrastructure:
  fanoutWorkers: 1
  writesPerSecondPerWorker: 5000
  api: none
  costs: { ${costs} }
  postToLog: 0s
  worker: { splitPosts: ${o.splitPosts ?? false} }
policy: { kind: push, skipDormant: false }
`, followers + 1);
  return simulate({ scenario: sc, population: buildPopulation(starGraph(followers), sc), policy: basePolicy(sc) });
}
