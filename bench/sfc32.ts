// sfc32, the uniform source feedlab drew from before seedrandom's alea (core/random.ts): kept here
// only as the reference the simulate benchmark holds alea against. Seeded as it was, through
// splitmix32 over a hash of the seed.
import { mix32, type UniformSource } from '../core/random.js';

function seedHash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return mix32(h);
}

export class Sfc32 implements UniformSource {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: string) {
    let s = seedHash(seed);
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
    for (let i = 0; i < 12; i++) this.int32();
  }

  int32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t;
  }

  double(): number {
    return ((this.int32() >>> 0) * 0x200000 + (this.int32() >>> 11)) / 9007199254740992;
  }
}
