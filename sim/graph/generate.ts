// A directed power-law follower graph in the Chung-Lu style.
//
// Every account draws how many accounts it follows from a lognormal law with mean avgFollows.
// Every ordinary account gets a follower quota from a power law of exponent alpha over
// popularity ranks (popularity.ts), and the followees are drawn by the quotas left (planned in
// followees.ts, drawn in stub-draws.ts), so follower counts follow the law without Poisson noise. Celebrities are the last accounts of
// the id range, followed by an exact number of accounts chosen uniformly without replacement.

import { Rng } from '../../core/random.js';
import type { FollowerGraph } from './graph.js';
import { drawnRows, planFollowees, type DrawPlan, type ShortRows } from './followees.js';
import { blockRng, drawBlock } from './stub-draws.js';
import { followerQuotas, followerTargets, shuffledIds } from './popularity.js';
import { addLists, MAX_EDGES, sortRows, transpose, type ColumnList, type Csr } from './csr.js';

export interface CelebrityParams {
  count: number;
  /** <= 1: a share of the users; > 1: an absolute follower count (at most users - 1). */
  followers: number;
  /** Name of a single celebrity, or the prefix for several (`${name}-1`, `${name}-2`, ...). */
  name?: string;
}

export interface GenerateParams {
  /** All accounts, celebrities included. */
  users: number;
  avgFollows: number;
  /** Tail exponent of follower counts (> 1; real networks 2 .. 3.5). */
  alpha: number;
  maxFollows: number;
  /** Sigma of the lognormal followee-count law. */
  followsSigma: number;
  seed: number;
  celebrities: CelebrityParams[];
}

export const GENERATE_DEFAULTS = { maxFollows: 5000, followsSigma: 1 } as const;

export type GenerateProgress = (fraction: number, detail: string) => void;

/** A celebrity's follower count inside a graph of `users` accounts. */
export function celebrityFollowers(followers: number, users: number): number {
  const n = followers <= 1 ? Math.round(followers * users) : Math.round(followers);
  return Math.min(users - 1, n);
}

/** The ids and names the celebrities get: the last accounts, in the order given. */
export function celebrityNames(celebrities: CelebrityParams[]): string[] {
  const names: string[] = [];
  let unnamed = 0;
  for (const c of celebrities) {
    for (let k = 1; k <= c.count; k++) {
      if (c.name !== undefined) names.push(c.count === 1 ? c.name : `${c.name}-${k}`);
      else names.push(`celebrity-${++unnamed}`);
    }
  }
  return names;
}

export function validateGenerateParams(p: GenerateParams): void {
  const bad = (msg: string) => {
    throw new RangeError(`graph generate: ${msg}`);
  };
  const celebrities = p.celebrities.reduce((s, c) => s + c.count, 0);
  if (!Number.isInteger(p.users) || p.users < 2 || p.users > 0xfffffffe) bad(`users must be a whole number from 2 to 4294967294, got ${p.users}`);
  if (!(p.alpha > 1)) bad(`alpha must be greater than 1, got ${p.alpha}`);
  if (!(p.avgFollows > 0)) bad(`avgFollows must be positive, got ${p.avgFollows}`);
  if (!Number.isInteger(p.maxFollows) || p.maxFollows < 1) bad(`maxFollows must be a whole number >= 1, got ${p.maxFollows}`);
  if (!(p.followsSigma >= 0)) bad(`followsSigma must be >= 0, got ${p.followsSigma}`);
  if (!Number.isFinite(p.seed)) bad(`seed must be a number, got ${p.seed}`);
  for (const c of p.celebrities) {
    if (!Number.isInteger(c.count) || c.count < 1) bad(`celebrity count must be a whole number >= 1, got ${c.count}`);
    if (!(c.followers > 0)) bad(`celebrity followers must be positive, got ${c.followers}`);
    if (c.followers > 1 && c.followers > p.users - 1) bad(`a celebrity can have at most users - 1 = ${p.users - 1} followers, got ${c.followers}`);
  }
  if (p.users - celebrities < 2) bad(`${celebrities} celebrities leave fewer than 2 ordinary users out of ${p.users}`);
  const expected = p.users * p.avgFollows + p.celebrities.reduce((sum, c) => sum + c.count * celebrityFollowers(c.followers, p.users), 0);
  if (expected > 0.99 * MAX_EDGES) bad(`about ${Math.round(expected)} edges is more than the ${MAX_EDGES} a graph can hold`);
  if (p.avgFollows > p.users - celebrities - 1) bad(`avgFollows ${p.avgFollows} exceeds the ${p.users - celebrities - 1} accounts anyone can follow`);
}

/**
 * The bulk work of a generation, which a driver does inline (generateGraph) or on worker threads
 * (sim/parallel/generate-graph.ts); the answers are the same either way.
 */
export type GenerationStep =
  /** Every block of the followee draws; answered with each block's short rows, in block order. */
  | { kind: 'draw'; plan: DrawPlan; out: Uint32Array; progress: (fraction: number) => void }
  /** The drawn rows with the lists added, in their own buffer, each row sorted (csr.ts addLists, sortRows); answered with the rows. */
  | { kind: 'add lists'; rows: Csr; lists: ColumnList[]; buffer: Uint32Array }
  /** A transpose (csr.ts transpose); answered with the transposed rows. */
  | { kind: 'transpose'; rows: Csr; columns: number };

export type GenerationAnswer = ShortRows[] | Csr;

/** The generation as a series of steps for a driver; `alloc` makes its large id buffers. */
export function* generation(p: GenerateParams, report: GenerateProgress, alloc: (length: number) => Uint32Array): Generator<GenerationStep, FollowerGraph, GenerationAnswer> {
  validateGenerateParams(p);
  const users = p.users;
  const names = celebrityNames(p.celebrities);
  const ordinary = users - names.length;

  const outDegree = followeeCounts(users, ordinary, p, Rng.derive(p.seed, 'graph/follows'));
  let slots = 0;
  let following = 0;
  for (let u = 0; u < users; u++) {
    slots += outDegree[u];
    if (outDegree[u] > 0) following++;
  }
  // Nobody can have more followers than the other accounts that follow anyone.
  const targets = followerTargets(ordinary, p.alpha, slots, Math.max(1, following - 1));
  const quotas = followerQuotas(targets, Rng.derive(p.seed, 'graph/quotas'));

  const celebrityCounts = p.celebrities.flatMap((c) => Array<number>(c.count).fill(celebrityFollowers(c.followers, users)));
  const total = slots + celebrityCounts.reduce((s, n) => s + n, 0);
  if (total > MAX_EDGES) throw new RangeError(`graph generate: ${total} edges is more than the ${MAX_EDGES} a graph can hold`);

  // One buffer for the followee ids, sized for every edge: the draws fill its front, and the lists'
  // edges join them in it.
  const followeeIds = alloc(total);
  const idOfRank = shuffledIds(ordinary, Rng.derive(p.seed, 'graph/ids'));
  const plan = planFollowees({ quotas, targets, idOfRank, slots: outDegree }, p.seed);
  const out = followeeIds.subarray(0, plan.offsets[users]);
  const short = (yield { kind: 'draw', plan, out, progress: (f) => report(0.8 * f, 'drawing followees') }) as ShortRows[];
  const drawn = drawnRows(plan, out, short);

  report(0.8, 'celebrities');
  const stamp = new Uint32Array(celebrityCounts.length > 0 ? users : 0);
  const celebrityLists = celebrityCounts.map((n, k) => ({
    column: ordinary + k,
    ids: sampleFollowers(users, ordinary + k, n, Rng.derive(p.seed, `graph/celebrity/${k}`), stamp, k + 1),
  }));

  report(0.85, 'sorting followee lists');
  const followees = (yield { kind: 'add lists', rows: drawn, lists: celebrityLists, buffer: followeeIds }) as Csr;
  const edges = followees.ids.length;
  report(0.9, 'building follower lists');
  const followers = (yield { kind: 'transpose', rows: followees, columns: users }) as Csr;
  report(1, 'done');

  const nameMap = new Map<number, string>();
  names.forEach((name, k) => nameMap.set(ordinary + k, name));
  return {
    users,
    edges,
    followerOffsets: followers.offsets,
    followerIds: followers.ids,
    followeeOffsets: followees.offsets,
    followeeIds: followees.ids,
    names: nameMap,
    provenance: {
      generator: GENERATOR,
      users,
      avgFollows: p.avgFollows,
      alpha: p.alpha,
      maxFollows: p.maxFollows,
      followsSigma: p.followsSigma,
      seed: p.seed,
      celebrities: JSON.stringify(p.celebrities),
    },
  };
}

/**
 * The generator's name and version in a graph's provenance. Version 2 draws graphs of 16M slots or
 * more in blocks (followees.ts); smaller graphs have version 1's edges.
 */
export const GENERATOR = 'feedlab chung-lu/2';

/** A generated graph on this thread. */
export function generateGraph(p: GenerateParams, onProgress?: GenerateProgress): FollowerGraph {
  const steps = generation(p, onProgress ?? (() => {}), (n) => new Uint32Array(n));
  let next = steps.next();
  while (!next.done) next = steps.next(runStep(next.value));
  return next.value;
}

/** A step done on this thread. */
export function runStep(step: GenerationStep): GenerationAnswer {
  if (step.kind === 'transpose') return transpose(step.rows, step.columns);
  if (step.kind === 'add lists') {
    const rows = addLists(step.rows, step.lists, step.buffer);
    sortRows(rows, 0, rows.offsets.length - 1);
    return rows;
  }
  const blocks = step.plan.blockStarts.length - 1;
  const short: ShortRows[] = [];
  for (let b = 0; b < blocks; b++) short.push(drawBlock(step.plan, b, step.out, blockRng(step.plan, b), (f) => step.progress((b + f) / blocks)));
  return short;
}

/** Followee counts: lognormal with mean avgFollows, rounded, capped at maxFollows and at the accounts one can follow. */
function followeeCounts(users: number, ordinary: number, p: GenerateParams, rng: Rng): Uint32Array {
  const counts = new Uint32Array(users);
  const sigma = p.followsSigma;
  const mu = Math.log(p.avgFollows) - (sigma * sigma) / 2;
  for (let u = 0; u < users; u++) {
    const cap = Math.min(p.maxFollows, u < ordinary ? ordinary - 1 : ordinary);
    const d = Math.round(Math.exp(mu + sigma * rng.normal()));
    counts[u] = d < cap ? d : cap;
  }
  return counts;
}

/**
 * `count` distinct accounts out of `users`, never `self`, sorted ascending. `stamp` is scratch
 * shared between calls, `mark` new for each call.
 */
function sampleFollowers(users: number, self: number, count: number, rng: Rng, stamp: Uint32Array, mark: number): Uint32Array {
  const candidates = users - 1;
  // Draw the smaller of the set and its complement by rejection: at most 2 draws per pick on average.
  const complement = count > candidates / 2;
  const picks = complement ? candidates - count : count;
  const picked = new Uint32Array(picks);
  stamp[self] = mark;
  for (let k = 0; k < picks; ) {
    const v = rng.int(users);
    if (stamp[v] !== mark) {
      stamp[v] = mark;
      picked[k++] = v;
    }
  }
  if (!complement) return picked.sort();
  const out = new Uint32Array(count);
  let j = 0;
  for (let v = 0; v < users; v++) if (stamp[v] !== mark) out[j++] = v;
  return out;
}
