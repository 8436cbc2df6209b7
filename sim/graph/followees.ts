// Who follows whom. Every account has a number of followee slots; every ordinary account has a
// quota of followers (its in-stubs). Two ways fill the slots:
//
// - The few accounts whose quota is a sizeable share of everyone choose their followers
//   (chooseFollowers). Drawn one slot at a time they could not get them: an account that already
//   follows them cannot take a second stub, and late in the draws too few are left that do not.
// - Every other slot is drawn (stub-draws.ts): a draw picks an account in proportion to the stubs
//   it has left, so once the slots are filled each account has its quota (a directed configuration
//   model drawn the Chung-Lu way, without the Poisson noise of independent draws).
//
// A large graph's accounts are split into DRAW_BLOCKS blocks, each with its own share of every
// quota and its own seeded stream, in which the choices and then the draws are made: the blocks can
// be drawn at once on any number of threads and give the same graph. A graph with fewer slots is
// one block (its edges are generator version 1's, which drew the whole graph this way).
//
// A block's choices are grouped by account, and each account's row of slots gets its chosen ranks
// and then its drawn ones; ranks become ids at the end of the block (stub-draws.ts).

import { keyedUniform, Rng } from '../../core/random.js';
import { buildAliasTable, type AliasTable } from './alias.js';
import { equalShares, offsetsFromCounts, type Csr } from './csr.js';

/** Accounts whose quota is at least this share of the accounts that follow anyone, and this many, choose their followers. */
const HEAVY_SHARE = 0.05;
const HEAVY_MIN = 1000;
/**
 * Graphs with at least this many followee slots (celebrities' followers not counted) are drawn in
 * DRAW_BLOCKS blocks. Four divide evenly over 1, 2 or 4 threads and cost little in setting up each
 * block's urn; below 16M slots one block takes well under 2 s (1M users / 20M follows: 1.99 s for
 * one block on 2026-12-07), and the scenarios' graphs (10-13M) keep their edges.
 */
export const BLOCKS_FROM_SLOTS = 16_000_000;
export const DRAW_BLOCKS = 4;

export interface FolloweeDraw {
  /** Follower quota by popularity rank. */
  quotas: Uint32Array;
  /** Expected followers by rank: the plain Chung-Lu weights, for slots the quotas cannot fill. */
  targets: Float64Array;
  /** Account id of each rank. */
  idOfRank: Uint32Array;
  /** Followee slots of each account; ordinary accounts are ids < quotas.length. */
  slots: Uint32Array;
}

/** What every block's draws read (typed arrays only, so a thread can share them). */
export interface DrawPlan {
  /** Ranks before this chose their followers; the draws take from ranks heavy.. only. */
  heavy: number;
  quotas: Uint32Array;
  idOfRank: Uint32Array;
  rankOfId: Uint32Array;
  /** Where each account's drawn slots go (length users + 1). */
  offsets: Uint32Array;
  /** Block b is accounts blockStarts[b] .. blockStarts[b + 1]. */
  blockStarts: Uint32Array;
  /** Salt of the per-rank phase that splits each quota among the blocks (keyedUniform). */
  splitSalt: number;
  /** Expected followers by rank: the weights of the draws by plain popularity, for slots the stubs cannot fill (plainTable). */
  targets: Float64Array;
  seed: number;
}

/** The heavy ranks each of a block's accounts chose to follow: account first + i's are ranks[start[i] .. start[i + 1]), ascending. */
export interface HeavyFollows {
  start: Uint32Array;
  ranks: Uint32Array;
}

/** Accounts of a block whose slots could not all be filled, and how many were. */
export interface ShortRows {
  accounts: number[];
  filled: number[];
}

/** The plan of the choices and draws. */
export function planFollowees(d: FolloweeDraw, seed: number): DrawPlan {
  const ordinary = d.quotas.length;
  let following = 0;
  for (let u = 0; u < d.slots.length; u++) if (d.slots[u] > 0) following++;
  let heavy = 0;
  while (heavy < ordinary && d.quotas[heavy] >= Math.max(HEAVY_MIN, HEAVY_SHARE * following)) heavy++;
  const offsets = offsetsFromCounts(d.slots);
  const rankOfId = new Uint32Array(ordinary);
  for (let r = 0; r < ordinary; r++) rankOfId[d.idOfRank[r]] = r;
  return {
    heavy,
    quotas: d.quotas,
    idOfRank: d.idOfRank,
    rankOfId,
    offsets,
    blockStarts: equalShares(offsets, offsets[d.slots.length] >= BLOCKS_FROM_SLOTS ? DRAW_BLOCKS : 1),
    splitSalt: Rng.derive(seed, 'graph/split').uint32(),
    targets: d.targets,
    seed,
  };
}

/**
 * Block b's share of each rank's quota: the blocks split a quota by their shares of the slots,
 * rounded systematically at a random phase per rank, so the shares add up to the quota (each
 * boundary's term is computed alike by the blocks on both sides of it; the ends are 0 and q).
 */
export function blockQuotas(plan: DrawPlan, b: number): (rank: number) => number {
  const blocks = plan.blockStarts.length - 1;
  if (blocks === 1) return (r) => plan.quotas[r];
  const total = plan.offsets[plan.offsets.length - 1];
  const lo = plan.offsets[plan.blockStarts[b]] / total;
  const hi = b + 1 === blocks ? 1 : plan.offsets[plan.blockStarts[b + 1]] / total;
  return (r) => {
    const q = plan.quotas[r];
    const phase = keyedUniform(plan.splitSalt, r);
    return (b + 1 === blocks ? q : Math.floor(q * hi + phase)) - (b === 0 ? 0 : Math.floor(q * lo + phase));
  };
}

/** Plain popularity over ranks heavy.., or null when they weigh nothing. */
export function plainTable(targets: Float64Array, heavy: number): AliasTable | null {
  const w = targets.slice();
  w.fill(0, 0, heavy);
  let total = 0;
  for (let i = heavy; i < w.length; i++) total += w[i];
  return total > 0 ? buildAliasTable(w) : null;
}

/** The drawn followees by account, with the rows that came up short cut to what they hold. */
export function drawnRows(plan: DrawPlan, ids: Uint32Array, short: ShortRows[]): Csr {
  const offsets = plan.offsets;
  if (short.every((s) => s.accounts.length === 0)) return { offsets, ids };
  const users = offsets.length - 1;
  const counts = Uint32Array.from({ length: users }, (_, a) => offsets[a + 1] - offsets[a]);
  for (const s of short) s.accounts.forEach((a, k) => (counts[a] = s.filled[k]));
  const kept = offsetsFromCounts(counts);
  for (let a = 0; a < users; a++) ids.copyWithin(kept[a], offsets[a], offsets[a] + counts[a]);
  return { offsets: kept, ids: ids.subarray(0, kept[users]) };
}

/**
 * Ranks 0..heavy-1 choose their followers among block b's accounts, each taking one of the
 * follower's slots: an account with s empty
 * slots joins with probability c * s, c set so that the expected number is the block's share of
 * the quota (Poisson sampling: the count lands within a few square roots of it). Those who follow
 * many accounts are the likeliest followers of a popular one, as in the draws. Returns the ranks
 * each of the block's accounts follows by choice.
 *
 * Accounts are grouped by the slots they started with; inside a group a geometric skip finds the
 * next candidate at the group's rate, and a coin for (empty slots / slots) thins it to the
 * account's own rate, so the work follows the followers chosen, not the accounts passed over.
 */
export function chooseFollowers(plan: DrawPlan, b: number, rng: Rng): HeavyFollows {
  const { heavy, offsets } = plan;
  const first = plan.blockStarts[b];
  const users = plan.blockStarts[b + 1] - first;
  if (heavy === 0) return { start: new Uint32Array(users + 1), ranks: new Uint32Array(0) };
  const slots = new Uint32Array(users); // empty slots, by account - first
  let maxSlots = 0;
  for (let i = 0; i < users; i++) {
    slots[i] = offsets[first + i + 1] - offsets[first + i];
    maxSlots = Math.max(maxSlots, slots[i]);
  }
  // Group s is order[start[s] .. start[s + 1]): the accounts with s slots, in id order.
  const start = new Float64Array(maxSlots + 2);
  for (let i = 0; i < users; i++) start[slots[i] + 1]++;
  for (let s = 1; s < start.length; s++) start[s] += start[s - 1];
  const order = new Uint32Array(users);
  const next = start.slice();
  for (let i = 0; i < users; i++) order[next[slots[i]]++] = i;
  const bySlots = new Float64Array(maxSlots + 1); // accounts by empty slots now
  for (let i = 0; i < users; i++) bySlots[slots[i]]++;

  const quota = blockQuotas(plan, b);
  // The choices as (account, rank) in the order made, grouped by account at the end: writing each
  // into the account's row at once cost a read and a write far apart in memory per choice (four
  // blocks' choices of a 1M / 20M graph: 228-350 ms grouped, 318-507 ms so, alternated runs).
  let pickedAccount: Uint32Array = new Uint32Array(1024);
  let pickedRank: Uint32Array = new Uint32Array(1024);
  let picks = 0;
  for (let r = 0; r < heavy; r++) {
    const q = quota(r);
    if (q === 0) continue;
    const c = joinRate(bySlots, q);
    const self = plan.idOfRank[r] - first;
    for (let group = 1; group <= maxSlots; group++) {
      const end = start[group + 1];
      const groupRate = Math.min(1, c * group);
      if (start[group] === end || groupRate === 0) continue;
      const logMiss = Math.log1p(-groupRate); // -Infinity when everyone joins: no skips
      for (let i = start[group] + skip(rng, logMiss); i < end; i += 1 + skip(rng, logMiss)) {
        const u = order[i];
        const s = slots[u];
        if (s === 0 || u === self) continue;
        if (s < group && rng.float() * groupRate >= Math.min(1, c * s)) continue;
        if (picks === pickedAccount.length) {
          pickedAccount = grown(pickedAccount);
          pickedRank = grown(pickedRank);
        }
        pickedAccount[picks] = u;
        pickedRank[picks++] = r;
        slots[u] = s - 1;
        bySlots[s]--;
        bySlots[s - 1]++;
      }
    }
  }
  // What each account took is the slots it no longer has: counted here, not per choice, which was a
  // second read far away in memory per choice (four blocks' choices of a 1M / 20M graph, three
  // alternated runs on 2026-12-07: 685-910 ms cold, 393-471 warm, against 874-1,086 and 482-816).
  const taken = new Uint32Array(users);
  for (let i = 0; i < users; i++) taken[i] = offsets[first + i + 1] - offsets[first + i] - slots[i];
  const byAccount = offsetsFromCounts(taken);
  const ranks = new Uint32Array(picks);
  const cursor = taken; // reused: where each account's next rank goes
  cursor.set(byAccount.subarray(0, users));
  for (let k = 0; k < picks; k++) ranks[cursor[pickedAccount[k]]++] = pickedRank[k];
  return { start: byAccount, ranks };
}

/** The same array twice as long. */
function grown(a: Uint32Array): Uint32Array {
  const b = new Uint32Array(2 * a.length);
  b.set(a);
  return b;
}

/** Accounts passed over before the next candidate, at a miss chance of e^logMiss per account. */
function skip(rng: Rng, logMiss: number): number {
  return logMiss === -Infinity ? 0 : Math.floor(Math.log(rng.floatOpen()) / logMiss);
}

/** c with Σ_s accounts(s) · min(1, c s) = quota over accounts with s >= 1 empty slots (1 when everyone is needed). */
function joinRate(bySlots: Float64Array, quota: number): number {
  const expected = (c: number) => {
    let sum = 0;
    for (let s = 1; s < bySlots.length; s++) sum += bySlots[s] * Math.min(1, c * s);
    return sum;
  };
  if (expected(1) <= quota) return 1;
  let lo = 0;
  let hi = 1;
  for (let i = 0; i < 50; i++) {
    const mid = (lo + hi) / 2;
    if (expected(mid) < quota) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}
