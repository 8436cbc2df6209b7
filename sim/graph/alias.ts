// Walker/Vose alias table: O(1) weighted draws, which is what makes drawing
// a hundred million followees by popularity affordable.

import type { Rng } from '../random.js';

export interface AliasTable {
  readonly size: number;
  /** Probability of keeping column i rather than jumping to alias[i]. */
  readonly keep: Float64Array;
  readonly alias: Uint32Array;
}

/** Build the table for non-negative weights (not all zero). Zero-weight entries are never drawn. */
export function buildAliasTable(weights: Float64Array): AliasTable {
  const n = weights.length;
  let total = 0;
  for (let i = 0; i < n; i++) total += weights[i];
  if (!(total > 0)) throw new Error('alias table needs a positive total weight');
  const keep = new Float64Array(n);
  const alias = new Uint32Array(n);
  // Two stacks in one array: small columns grow from the front, large from the back.
  const work = new Uint32Array(n);
  let small = 0;
  let large = n;
  const scale = n / total;
  for (let i = 0; i < n; i++) {
    keep[i] = weights[i] * scale;
    if (keep[i] < 1) work[small++] = i;
    else work[--large] = i;
  }
  while (small > 0 && large < n) {
    const s = work[--small];
    const l = work[large];
    alias[s] = l;
    keep[l] = keep[l] + keep[s] - 1;
    if (keep[l] < 1) {
      large++;
      work[small++] = l;
    }
  }
  // Whatever is left is 1 up to rounding error (a zero weight never is: it is always paired off).
  while (large < n) keep[work[large++]] = 1;
  while (small > 0) keep[work[--small]] = 1;
  return { size: n, keep, alias };
}

/** One weighted draw. One 53-bit uniform gives both the column and the coin (its fractional part). */
export function drawAlias(table: AliasTable, rng: Rng): number {
  const x = rng.float() * table.size;
  const i = Math.floor(x);
  return x - i < table.keep[i] ? i : table.alias[i];
}
