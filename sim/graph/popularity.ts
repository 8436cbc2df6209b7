// How many followers each ordinary account should get: a power law over popularity ranks,
// scaled to the edges the followee draws will make, clipped where it asks for more
// followers than there are, and rounded to whole followers without adding noise.

import type { Rng } from '../../core/random.js';

/**
 * Expected follower counts by rank (0 = most popular): rank i weighs w = (i + 1)^(-1/(alpha - 1)),
 * so the number of accounts expecting more than t followers falls as t^-(alpha-1), a density with
 * exponent alpha. No account can have more followers than `cap` (the others who follow anyone),
 * so the counts saturate smoothly, t = s w / (1 + s w / cap), with the scale s chosen so that
 * they sum to `edges`. Far below the cap this is the power law; near it the head stays ordered
 * and distinct instead of piling up at the cap.
 */
export function followerTargets(ordinary: number, alpha: number, edges: number, cap: number): Float64Array {
  const t = new Float64Array(ordinary);
  if (edges >= 0.99 * ordinary * cap) {
    // Nearly everyone follows nearly everyone: there is no room for a tail.
    t.fill(edges / ordinary);
    return t;
  }
  const exponent = -1 / (alpha - 1);
  let sum = 0;
  for (let i = 0; i < ordinary; i++) {
    t[i] = Math.pow(i + 1, exponent);
    sum += t[i];
  }
  // Newton on the increasing, concave g(s) = Σ s w / (1 + s w / cap): from below it stays below.
  let scale = edges / sum;
  for (let iteration = 0; iteration < 100; iteration++) {
    let g = 0;
    let slope = 0;
    for (let i = 0; i < ordinary; i++) {
      const q = 1 / (1 + (scale * t[i]) / cap);
      g += scale * t[i] * q;
      slope += t[i] * q * q;
    }
    const step = (edges - g) / slope;
    scale += step;
    if (step <= 1e-12 * scale) break;
  }
  for (let i = 0; i < ordinary; i++) t[i] = (scale * t[i]) / (1 + (scale * t[i]) / cap);
  return t;
}

/**
 * Whole follower counts whose sum is exactly round(Σ targets), each the floor or ceiling of its
 * target (systematic rounding with one random phase). Rounding each account separately, or
 * letting counts be Poisson as in plain Chung-Lu, adds noise that bends the low end of the tail
 * and biases the fitted exponent upwards.
 */
export function followerQuotas(targets: Float64Array, rng: Rng): Uint32Array {
  const quotas = new Uint32Array(targets.length);
  let cumulative = rng.float();
  let previous = 0;
  for (let i = 0; i < targets.length; i++) {
    cumulative += targets[i];
    const whole = Math.floor(cumulative);
    quotas[i] = whole - previous;
    previous = whole;
  }
  return quotas;
}

/** A random account id for each popularity rank, so that popularity is not the id order. */
export function shuffledIds(count: number, rng: Rng): Uint32Array {
  const ids = new Uint32Array(count);
  for (let i = 0; i < count; i++) ids[i] = i;
  for (let i = count - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    const t = ids[i];
    ids[i] = ids[j];
    ids[j] = t;
  }
  return ids;
}
