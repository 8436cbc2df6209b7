// Who follows whom. Every account has a number of followee slots; every ordinary account has a
// quota of followers (its in-stubs). Two ways fill the slots:
//
// - The few accounts whose quota is a sizeable share of everyone choose their followers
//   (chooseFollowers). Drawn one slot at a time they could not get them: an account that already
//   follows them cannot take a second stub, and late in the draws too few are left that do not.
// - Every other slot is drawn: a draw picks an account in proportion to the stubs it has left,
//   so once the slots are filled each account has its quota (a directed configuration model
//   drawn the Chung-Lu way, without the Poisson noise of independent draws).
//
// Draws happen in rank space, where the popular accounts sit together and the per-account state
// stays in cache; ranks become ids in one pass at the end.

import type { Rng } from '../../core/random.js';
import { AliasSampler, buildAliasTable } from './alias.js';
import { offsetsFromCounts, type Csr } from './csr.js';

/** This many draws in a row of accounts the current one already follows: the stubs left cannot serve it. */
const MAX_CONFLICT_RUN = 16;
/** Rebuild the urn's table when more than 1/REBUILD_SHARE of a block of draws find a rank with no stubs left. */
const REBUILD_BLOCK = 65536;
const REBUILD_SHARE = 8;
/** Accounts whose quota is at least this share of the accounts that follow anyone, and this many, choose their followers. */
const HEAVY_SHARE = 0.05;
const HEAVY_MIN = 1000;

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

export interface Followees {
  /** The drawn followees by account (account ids; `ids` is a view on the buffer given). */
  drawn: Csr;
  /** Accounts that chose their followers, with those followers in ascending order. */
  chosen: { account: number; followers: Uint32Array }[];
}

/** `buffer` must hold every slot. */
export function drawFollowees(d: FolloweeDraw, buffer: Uint32Array, rng: Rng, progress: (f: number) => void): Followees {
  const ordinary = d.quotas.length;
  const slots = d.slots.slice();
  let following = 0;
  for (let u = 0; u < slots.length; u++) if (slots[u] > 0) following++;
  let heavy = 0;
  while (heavy < ordinary && d.quotas[heavy] >= Math.max(HEAVY_MIN, HEAVY_SHARE * following)) heavy++;
  const chosen = chooseFollowers(d, heavy, slots, rng);
  const offsets = offsetsFromCounts(slots);
  const drawn = drawSlots(d, heavy, offsets, buffer.subarray(0, offsets[slots.length]), rng, progress);
  return { drawn, chosen };
}

/**
 * Fill the slots by drawing from the stubs of ranks heavy.. (ranks before them are full). Slots
 * that cannot be filled (an account that would follow nearly everyone) are dropped.
 */
function drawSlots(d: FolloweeDraw, heavy: number, offsets: Uint32Array, out: Uint32Array, rng: Rng, progress: (f: number) => void): Csr {
  const ordinary = d.quotas.length;
  const users = offsets.length - 1;
  // Per rank, side by side so one draw touches one cache line: [2r] the stubs it has left,
  // [2r + 1] the mark of the last account that took it (the current account follows it when
  // that is its own mark).
  const state = new Uint32Array(2 * ordinary);
  let left = 0;
  for (let r = heavy; r < ordinary; r++) {
    state[2 * r] = d.quotas[r];
    left += d.quotas[r];
  }
  let urn = left > 0 ? stubSampler(state, rng) : null;
  // Rebuild the table over the stubs left when too many recent draws found a rank with none left.
  let empty = 0;
  let block = 0;
  let fallback: AliasSampler | null = null;
  let fallbackBuilt = false;
  const rankOfId = new Uint32Array(ordinary);
  for (let r = 0; r < ordinary; r++) rankOfId[d.idOfRank[r]] = r;
  let short: Uint32Array | null = null; // slots filled, by account, once one comes up short
  const step = Math.max(1, Math.floor(users / 100));
  for (let u = 0; u < users; u++) {
    const end = offsets[u + 1];
    let e = offsets[u];
    const mark = u + 1;
    if (u < ordinary) state[2 * rankOfId[u] + 1] = mark; // no self-loops
    let conflicts = 0;
    while (e < end && urn !== null && conflicts < MAX_CONFLICT_RUN) {
      const v = urn.next();
      if (++block === REBUILD_BLOCK) {
        if (empty * REBUILD_SHARE > REBUILD_BLOCK) urn = stubSampler(state, rng);
        empty = block = 0;
      }
      if (state[2 * v] === 0) {
        empty++;
        continue;
      }
      if (state[2 * v + 1] === mark) {
        conflicts++;
        continue;
      }
      conflicts = 0;
      state[2 * v + 1] = mark;
      state[2 * v]--;
      out[e++] = v;
      if (--left === 0) urn = null;
    }
    if (e < end) {
      // The stubs left cannot serve this account (it follows their few owners already, or it is
      // the last one): draw by plain popularity instead, never an account that chose its followers.
      if (!fallbackBuilt) {
        fallback = plainSampler(d.targets, heavy, rng);
        fallbackBuilt = true;
      }
      let budget = 32 * (end - e) + 1024;
      while (e < end && budget-- > 0 && fallback !== null) {
        const v = fallback.next();
        if (state[2 * v + 1] !== mark) {
          state[2 * v + 1] = mark;
          out[e++] = v;
        }
      }
    }
    if (e < end) {
      // Still short (it follows nearly everyone): take the rest in rank order from a random start.
      const open = ordinary - heavy;
      let v = heavy + rng.int(open);
      for (let k = 0; e < end && k < open; k++, v = v + 1 === ordinary ? heavy : v + 1) {
        if (state[2 * v + 1] !== mark) {
          state[2 * v + 1] = mark;
          out[e++] = v;
        }
      }
    }
    if (e < end || short) {
      short ??= Uint32Array.from({ length: users }, (_, a) => offsets[a + 1] - offsets[a]);
      short[u] = e - offsets[u];
    }
    if (u % step === 0) progress(u / users);
  }
  for (let e = 0; e < out.length; e++) out[e] = d.idOfRank[out[e]];
  return short ? compact(offsets, out, short) : { offsets, ids: out };
}

/** Plain popularity over ranks heavy.., or null when they weigh nothing. */
function plainSampler(targets: Float64Array, heavy: number, rng: Rng): AliasSampler | null {
  const w = targets.slice();
  w.fill(0, 0, heavy);
  let total = 0;
  for (let i = heavy; i < w.length; i++) total += w[i];
  return total > 0 ? new AliasSampler(buildAliasTable(w), rng) : null;
}

/** Keep the first counts[a] entries of each row. */
function compact(offsets: Uint32Array, ids: Uint32Array, counts: Uint32Array): Csr {
  const kept = offsetsFromCounts(counts);
  for (let a = 0; a < counts.length; a++) ids.copyWithin(kept[a], offsets[a], offsets[a] + counts[a]);
  return { offsets: kept, ids: ids.subarray(0, kept[counts.length]) };
}

/** Draws ranks in proportion to the stubs they have left (`state[2r]`). */
function stubSampler(state: Uint32Array, rng: Rng): AliasSampler {
  const n = state.length / 2;
  let active = 0;
  for (let i = 0; i < n; i++) if (state[2 * i] > 0) active++;
  if (4 * active > n) {
    // Most ranks still have stubs: a full-size table (empty ranks weigh nothing).
    const weights = new Float64Array(n);
    for (let i = 0; i < n; i++) weights[i] = state[2 * i];
    return new AliasSampler(buildAliasTable(weights), rng);
  }
  // Otherwise a small table over the ranks with stubs left, labelled with their ranks.
  const weights = new Float64Array(active);
  const labels = new Uint32Array(active);
  for (let i = 0, k = 0; i < n; i++) {
    if (state[2 * i] > 0) {
      weights[k] = state[2 * i];
      labels[k++] = i;
    }
  }
  return new AliasSampler(buildAliasTable(weights, labels), rng);
}

/**
 * Ranks 0..heavy-1 choose their followers, each taking one of the follower's slots: an account
 * with s empty slots joins with probability c * s, c set so that the expected number is the
 * quota (Poisson sampling: the count lands within a few square roots of it). Those who follow
 * many accounts are the likeliest followers of a popular one, as in the draws.
 *
 * Accounts are grouped by the slots they started with; inside a group a geometric skip finds the
 * next candidate at the group's rate, and a coin for (empty slots / slots) thins it to the
 * account's own rate, so the work follows the followers chosen, not the accounts passed over.
 */
function chooseFollowers(d: FolloweeDraw, heavy: number, slots: Uint32Array, rng: Rng): Followees['chosen'] {
  if (heavy === 0) return [];
  const users = slots.length;
  let maxSlots = 0;
  for (let u = 0; u < users; u++) maxSlots = Math.max(maxSlots, slots[u]);
  // Group s is order[start[s] .. start[s + 1]): the accounts with s slots, in id order.
  const start = new Float64Array(maxSlots + 2);
  for (let u = 0; u < users; u++) start[slots[u] + 1]++;
  for (let s = 1; s < start.length; s++) start[s] += start[s - 1];
  const order = new Uint32Array(users);
  const next = start.slice();
  for (let u = 0; u < users; u++) order[next[slots[u]]++] = u;
  const bySlots = new Float64Array(maxSlots + 1); // accounts by empty slots now
  for (let u = 0; u < users; u++) bySlots[slots[u]]++;

  const picked = new Uint32Array(users);
  const mark = new Uint32Array(users); // mark[u] === r + 1: u chose rank r
  const chosen: Followees['chosen'] = [];
  for (let r = 0; r < heavy; r++) {
    const c = joinRate(bySlots, d.quotas[r]);
    const self = d.idOfRank[r];
    let n = 0;
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
        picked[n++] = u;
        mark[u] = r + 1;
        slots[u] = s - 1;
        bySlots[s]--;
        bySlots[s - 1]++;
      }
    }
    // In id order: sort a short list, sweep the marks for a long one.
    let followers: Uint32Array;
    if (n * 16 < users) followers = picked.slice(0, n).sort();
    else {
      followers = new Uint32Array(n);
      for (let u = 0, k = 0; k < n; u++) if (mark[u] === r + 1) followers[k++] = u;
    }
    chosen.push({ account: self, followers });
  }
  return chosen;
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
