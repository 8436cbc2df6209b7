// Seeded randomness. Every draw in feedlab comes from here so that the same
// scenario and seed give byte-identical results.
import { mix32 } from '../core/hash.js';

/** sfc32: small, fast, 128-bit state, passes PractRand; seeded through splitmix32. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  private spareNormal = NaN;

  constructor(seed: number | string) {
    let s = typeof seed === 'string' ? hashString(seed) : seed >>> 0 ^ Math.floor(seed / 0x100000000);
    const next = () => {
      s = (s + 0x9e3779b9) | 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    for (let i = 0; i < 12; i++) this.uint32();
  }

  /** A child generator whose stream depends only on this seed and the label. */
  static derive(seed: number, label: string): Rng {
    return new Rng(hashString(`${seed}:${label}`));
  }

  uint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1) with 53 bits. */
  float(): number {
    return (this.uint32() * 0x200000 + (this.uint32() >>> 11)) / 9007199254740992;
  }

  /** Uniform in (0, 1]: safe under log(). */
  floatOpen(): number {
    return 1 - this.float();
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.float() * n);
  }

  exponential(rate: number): number {
    return -Math.log(this.floatOpen()) / rate;
  }

  normal(): number {
    if (!Number.isNaN(this.spareNormal)) {
      const v = this.spareNormal;
      this.spareNormal = NaN;
      return v;
    }
    const u = this.floatOpen();
    const v = this.float();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spareNormal = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }

  /** Poisson draw; inversion for small means, normal approximation beyond 500. */
  poisson(mean: number): number {
    if (mean <= 0) return 0;
    if (mean > 500) return Math.max(0, Math.round(mean + Math.sqrt(mean) * this.normal()));
    const l = Math.exp(-mean);
    let k = 0;
    let p = this.float();
    while (p > l) {
      k++;
      p *= this.float();
    }
    return k;
  }
}

/** FNV-1a over UTF-16 code units, then avalanche. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return mix32(h);
}

export { mix32 };
