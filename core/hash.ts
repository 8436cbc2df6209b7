// The integer hashes the feed rules draw on, shared by server and simulator so that a draw made
// from the same inputs decides the same way in both.

/** A 32-bit avalanche (murmur3 finaliser). */
export function mix32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}
