// "Did you mean" for misspelt keys: the nearest candidate by edit distance.

/**
 * Damerau-Levenshtein distance (optimal string alignment): insertions, deletions,
 * substitutions and swaps of adjacent characters each cost 1. Swaps matter because
 * `celebirties` is a typo people make.
 */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d = new Uint32Array(rows * cols);
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[(i - 1) * cols + j] + 1, d[i * cols + j - 1] + 1, d[(i - 1) * cols + j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, d[(i - 2) * cols + j - 2] + 1);
      }
      d[i * cols + j] = best;
    }
  }
  return d[rows * cols - 1];
}

/**
 * The candidate nearest to `word` (case-insensitive), or undefined when none is close:
 * within a third of the word's length (at least 1), so short typos still match but
 * unrelated short words do not.
 */
export function nearest(word: string, candidates: Iterable<string>): string | undefined {
  const w = word.toLowerCase();
  const limit = Math.max(1, Math.floor(word.length / 3));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const distance = editDistance(w, c.toLowerCase());
    if (distance <= limit && distance < bestDistance) {
      best = c;
      bestDistance = distance;
    }
  }
  return best;
}
