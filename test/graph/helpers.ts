// Shared checks for graph tests: structural invariants checked without the code under test.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { FollowerGraph } from '../../sim/graph/graph.js';

/** The real graphs shipped in the repository (data/README.md gives their sources and licences). */
export const DATA = join(import.meta.dirname, '../../data');
export const SLASHDOT = join(DATA, 'soc-Slashdot0902.txt.gz');
export const EGO_TWITTER = join(DATA, 'out.ego-twitter');

export function scratch(): string {
  return mkdtempSync(join(tmpdir(), 'feedlab-graph-'));
}

/**
 * Offsets well formed, every list strictly ascending (so no duplicates), no self-loops, ids in
 * range, and the two directions holding exactly the same set of edges.
 */
export function expectWellFormed(g: FollowerGraph): void {
  expect(g.followerOffsets.length).toBe(g.users + 1);
  expect(g.followeeOffsets.length).toBe(g.users + 1);
  expect(g.followerIds.length).toBe(g.edges);
  expect(g.followeeIds.length).toBe(g.edges);
  const fromFollowees = new Float64Array(g.edges);
  const fromFollowers = new Float64Array(g.edges);
  let problems = 0;
  for (const [offsets, ids, keys, flip] of [
    [g.followeeOffsets, g.followeeIds, fromFollowees, false],
    [g.followerOffsets, g.followerIds, fromFollowers, true],
  ] as const) {
    expect(offsets[0]).toBe(0);
    expect(offsets[g.users]).toBe(g.edges);
    for (let a = 0; a < g.users; a++) {
      if (offsets[a] > offsets[a + 1]) problems++;
      for (let e = offsets[a]; e < offsets[a + 1]; e++) {
        const b = ids[e];
        if (b === a || b >= g.users) problems++;
        if (e > offsets[a] && ids[e - 1] >= b) problems++;
        keys[e] = flip ? b * g.users + a : a * g.users + b; // follower * users + followee
      }
    }
  }
  expect(problems).toBe(0);
  fromFollowees.sort();
  fromFollowers.sort();
  expect(Buffer.from(fromFollowees.buffer).equals(Buffer.from(fromFollowers.buffer))).toBe(true);
}

export function followers(g: FollowerGraph, a: number): number {
  return g.followerOffsets[a + 1] - g.followerOffsets[a];
}

export function followees(g: FollowerGraph, u: number): number {
  return g.followeeOffsets[u + 1] - g.followeeOffsets[u];
}
