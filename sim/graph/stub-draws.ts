// One block of the followee draws (followees.ts plans them): its accounts' slots filled by drawing
// ranks in proportion to the stubs the block has left of each quota. A block reads the plan and
// writes only its own accounts' slots, so blocks can be drawn on different threads at once.
//
// Draws happen in rank space, where the popular accounts sit together and the per-account state
// stays in cache; ranks become ids in one pass at the end.

import { Rng } from '../../core/random.js';
import { AliasSampler, AliasScratch, buildAliasTable } from './alias.js';
import { blockQuotas, chooseFollowers, plainTable, type DrawPlan, type ShortRows } from './followees.js';

/** This many draws in a row of accounts the current one already follows: the stubs left cannot serve it. */
const MAX_CONFLICT_RUN = 16;
/** Rebuild the urn's table when more than 1/REBUILD_SHARE of a window of draws find a rank with no stubs left. */
const REBUILD_WINDOW = 65536;
const REBUILD_SHARE = 8;

/** Block b's stream (a lone block's is generator version 1's edges' stream). */
export function blockRng(plan: DrawPlan, b: number): Rng {
  return Rng.derive(plan.seed, plan.blockStarts.length === 2 ? 'graph/edges' : `graph/edges/${b}`);
}

/**
 * Fill block b's slots in `out` (indexed as plan.offsets) with account ids: the heavy accounts'
 * choices (followees.ts chooseFollowers), then the draws. Slots that cannot be filled (an account
 * that would follow nearly everyone) are left at the end of their rows, and their accounts
 * returned. `progress` gets the share of the block's accounts drawn (0 before the choices).
 */
export function drawBlock(plan: DrawPlan, b: number, out: Uint32Array, rng: Rng, progress: (f: number) => void): ShortRows {
  const { heavy, offsets, rankOfId, idOfRank } = plan;
  progress(0);
  const chosen = chooseFollowers(plan, b, rng);
  const ordinary = plan.quotas.length;
  const first = plan.blockStarts[b];
  const last = plan.blockStarts[b + 1];
  // Per rank, side by side so one draw touches one cache line: [2r] the stubs the block has left,
  // [2r + 1] the mark of the last account that took it (the current account follows it when
  // that is its own mark).
  const state = new Uint32Array(2 * ordinary);
  const quota = blockQuotas(plan, b);
  // The ranks that may still have stubs, in rank order: a rebuild reads these, not every rank
  // (with eight blocks, rebuilds over all 1M ranks took 0.35 s of a 1M / 20M graph's 5.0 s, 2026-12-07).
  const active = new Uint32Array(ordinary - heavy);
  let left = 0;
  let candidates = 0;
  for (let r = heavy; r < ordinary; r++) {
    const q = quota(r);
    state[2 * r] = q;
    left += q;
    if (q > 0) active[candidates++] = r;
  }
  const urns = new StubUrns(state, active, candidates, rng);
  let urn = left > 0 ? urns.rebuild() : null;
  // Rebuild the table over the stubs left when too many recent draws found a rank with none left.
  let empty = 0;
  let drawnInWindow = 0;
  let fallback: AliasSampler | null | undefined; // built when first needed (most blocks never need it)
  const short: ShortRows = { accounts: [], filled: [] };
  const step = Math.max(1, Math.floor((last - first) / 100));
  for (let u = first; u < last; u++) {
    const end = offsets[u + 1];
    let e = offsets[u];
    for (let k = chosen.start[u - first], stop = chosen.start[u - first + 1]; k < stop; k++) out[e++] = chosen.ranks[k];
    const mark = u + 1;
    if (u < ordinary) state[2 * rankOfId[u] + 1] = mark; // no self-loops
    let conflicts = 0;
    while (e < end && urn !== null && conflicts < MAX_CONFLICT_RUN) {
      const v = urn.next();
      if (++drawnInWindow === REBUILD_WINDOW) {
        if (empty * REBUILD_SHARE > REBUILD_WINDOW) urn = urns.rebuild();
        empty = drawnInWindow = 0;
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
    if (e < end && fallback === undefined) {
      const table = plainTable(plan.targets, heavy);
      fallback = table && new AliasSampler(table, rng);
    }
    if (e < end && fallback) {
      // The stubs left cannot serve this account (it follows their few owners already, or it is
      // the last one): draw by plain popularity instead, never an account that chose its followers.
      let budget = 32 * (end - e) + 1024;
      while (e < end && budget-- > 0) {
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
    if (e < end) {
      short.accounts.push(u);
      short.filled.push(e - offsets[u]);
    }
    if ((u - first) % step === 0) progress((u - first) / (last - first));
  }
  for (let e = offsets[first], end = offsets[last]; e < end; e++) out[e] = idOfRank[out[e]];
  progress(1);
  return short;
}

/**
 * Samplers of ranks in proportion to the stubs they have left (`state[2r]`). Each rebuild's table
 * lives in the same arrays as the one before (the previous sampler is dropped at the rebuild): a
 * block of a 1M / 20M graph rebuilds 9-10 times, and a 1M-rank table built in fresh arrays took
 * 39-51 ms against 25-30 ms in reused ones (four rounds of ten by hand, 2026-12-07; the same bytes).
 */
class StubUrns {
  private readonly scratch = new AliasScratch();
  private weights = new Float64Array(0);

  constructor(
    private readonly state: Uint32Array,
    private readonly active: Uint32Array,
    private count: number,
    private readonly rng: Rng,
  ) {}

  /** A sampler over the stubs left now (the one before it no longer draws). */
  rebuild(): AliasSampler {
    const { state, active } = this;
    let live = 0;
    for (let k = 0; k < this.count; k++) if (state[2 * active[k]] > 0) active[live++] = active[k];
    this.count = live;
    const n = state.length / 2;
    if (4 * live > n) {
      // Most ranks still have stubs: a full-size table (empty ranks weigh nothing).
      const weights = this.zeroedWeights(n);
      for (let k = 0; k < live; k++) weights[active[k]] = state[2 * active[k]];
      return new AliasSampler(buildAliasTable(weights, undefined, this.scratch), this.rng, state);
    }
    // Otherwise a small table over the ranks with stubs left, labelled with their ranks (active's
    // front, which only the next rebuild rewrites).
    const weights = this.zeroedWeights(live);
    const labels = active.subarray(0, live);
    for (let k = 0; k < live; k++) weights[k] = state[2 * labels[k]];
    return new AliasSampler(buildAliasTable(weights, labels, this.scratch), this.rng, state);
  }

  /** n weights, all 0, in the array the rebuilds share. */
  private zeroedWeights(n: number): Float64Array {
    if (this.weights.length < n) this.weights = new Float64Array(n);
    const w = this.weights.subarray(0, n);
    w.fill(0);
    return w;
  }
}
