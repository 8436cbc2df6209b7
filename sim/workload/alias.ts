// Walker's alias method: O(1) weighted draws from typed arrays.
import type { Rng } from '../random.js';

export class AliasTable {
  private readonly prob: Float64Array;
  private readonly alias: Int32Array;
  /** The ids that can be drawn (index i of the table draws ids[i]). */
  readonly ids: Int32Array;
  readonly totalWeight: number;

  constructor(ids: Int32Array, weights: Float64Array) {
    const n = ids.length;
    this.ids = ids;
    this.prob = new Float64Array(n);
    this.alias = new Int32Array(n);
    let total = 0;
    for (let i = 0; i < n; i++) total += weights[i];
    this.totalWeight = total;
    if (n === 0 || total <= 0) return;
    const scaled = new Float64Array(n);
    const small = new Int32Array(n);
    const large = new Int32Array(n);
    let ns = 0;
    let nl = 0;
    for (let i = 0; i < n; i++) {
      scaled[i] = (weights[i] * n) / total;
      if (scaled[i] < 1) small[ns++] = i;
      else large[nl++] = i;
    }
    while (ns > 0 && nl > 0) {
      const s = small[--ns];
      const l = large[--nl];
      this.prob[s] = scaled[s];
      this.alias[s] = l;
      scaled[l] = scaled[l] + scaled[s] - 1;
      if (scaled[l] < 1) small[ns++] = l;
      else large[nl++] = l;
    }
    while (nl > 0) this.prob[large[--nl]] = 1;
    while (ns > 0) this.prob[small[--ns]] = 1;
  }

  get size(): number {
    return this.ids.length;
  }

  draw(rng: Rng): number {
    const u = rng.float() * this.ids.length;
    const i = Math.floor(u);
    return this.ids[u - i < this.prob[i] ? i : this.alias[i]];
  }
}
