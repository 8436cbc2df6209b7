// The starting state a replay lays down before its measured window, as the simulator assumes it:
// every active author's posts of the last lease window, at the author's own rate (Poisson counts,
// uniform times), and post texts. Offsets are ms before the start, so the same scenario and seed
// give the same history whatever the wall clock says; the loader turns them into post ids.
import type { Population } from '../model/population.js';
import { Rng } from '../../core/random.js';

export interface History {
  /** Ms before the start (negative), ascending. */
  offsetMs: Float64Array;
  author: Int32Array;
}

/** Every active author's posts within `windowSeconds` before the start. */
export function historyPosts(seed: number, pop: Population, windowSeconds: number): History {
  const rng = Rng.derive(seed, 'history');
  const counts = new Int32Array(pop.users);
  let total = 0;
  for (let i = 0; i < pop.activeUsers.length; i++) {
    const u = pop.activeUsers[i];
    const n = rng.poisson(pop.postRate[u] * windowSeconds);
    counts[u] = n;
    total += n;
  }
  const offsets = new Float64Array(total);
  const authors = new Int32Array(total);
  let k = 0;
  for (let u = 0; u < pop.users; u++) {
    for (let j = 0; j < counts[u]; j++) {
      offsets[k] = -Math.ceil(rng.float() * windowSeconds * 1000);
      authors[k++] = u;
    }
  }
  // ascending time; ties by author, so the order (and the ids made from it) is a function of the seed
  const order = Array.from({ length: total }, (_, i) => i).sort((a, b) => offsets[a] - offsets[b] || authors[a] - authors[b]);
  return { offsetMs: Float64Array.from(order, (i) => offsets[i]), author: Int32Array.from(order, (i) => authors[i]) };
}

const WORDS = (
  'the a feed post timeline read write cache redis postgres follow news today morning coffee launch release bug fix ship ' +
  'weekend photo city train rain sun music game score team idea note draft thread reply love great new big small fast slow ' +
  'goal final match crowd stadium replay goalkeeper penalty corner header striker minute whistle'
).split(' ');

/** A post's text (40-200 characters), a function of the seed, a stream label and the post's index. */
export function postText(seed: number, stream: string, i: number): string {
  const rng = Rng.derive(seed, `${stream}:${i}`);
  const target = 40 + rng.int(161);
  let s = '';
  while (s.length < target) s += (s ? ' ' : '') + WORDS[rng.int(WORDS.length)];
  return s.slice(0, 280);
}
