// Rows on typed arrays (sim/graph/csr.ts): rows cut at equal shares, transposes whole or in ranges
// (the same either way), lists added to rows in their own buffer, rows sorted on both paths.
import { describe, expect, it } from 'vitest';
import { Rng } from '../../core/random.js';
import { addLists, countColumns, equalShares, offsetsFromCounts, scatterRows, sortRows, transpose, transposeCursors, type Csr } from '../../sim/graph/csr.js';

/** Random rows of distinct columns below `columns`, lengths 0..maxLength. */
function randomRows(rows: number, columns: number, maxLength: number, seed: number): Csr {
  const rng = new Rng(seed);
  const counts = Uint32Array.from({ length: rows }, () => rng.int(maxLength + 1));
  const offsets = offsetsFromCounts(counts);
  const ids = new Uint32Array(offsets[rows]);
  for (let r = 0; r < rows; r++) {
    const row = new Set<number>();
    while (row.size < counts[r]) row.add(rng.int(columns));
    ids.set([...row], offsets[r]);
  }
  return { offsets, ids };
}

const rowsOf = (c: Csr) => Array.from({ length: c.offsets.length - 1 }, (_, r) => Array.from(c.ids.subarray(c.offsets[r], c.offsets[r + 1])));

describe('equalShares', () => {
  it('cuts rows at about equal entries, from 0 to the row count', () => {
    const c = randomRows(10_000, 500, 40, 1);
    const bounds = equalShares(c.offsets, 4);
    expect(bounds[0]).toBe(0);
    expect(bounds[4]).toBe(10_000);
    for (let k = 0; k < 4; k++) expect(Math.abs(c.offsets[bounds[k + 1]] - c.offsets[bounds[k]] - c.ids.length / 4)).toBeLessThanOrEqual(40);
    expect(Array.from(equalShares(c.offsets, 1))).toEqual([0, 10_000]);
  });
});

describe('transpose', () => {
  it('gives each column its rows in ascending order, the same whole as in ranges', () => {
    const c = randomRows(3000, 700, 30, 2);
    const whole = transpose(c, 700);
    // by hand
    const expected: number[][] = Array.from({ length: 700 }, () => []);
    rowsOf(c).forEach((row, r) => row.forEach((col) => expected[col].push(r)));
    expect(rowsOf(whole)).toEqual(expected);
    // three ranges, as three threads do it
    const bounds = equalShares(c.offsets, 3);
    const counts = [0, 1, 2].map((k) => {
      const n = new Uint32Array(700);
      countColumns(c, bounds[k], bounds[k + 1], n);
      return n;
    });
    const offsets = transposeCursors(counts, 700);
    const ids = new Uint32Array(offsets[700]);
    for (const k of [2, 0, 1]) scatterRows(c, bounds[k], bounds[k + 1], counts[k], ids); // in any order
    expect(Array.from(offsets)).toEqual(Array.from(whole.offsets));
    expect(Array.from(ids)).toEqual(Array.from(whole.ids));
  });
});

describe('addLists and sortRows', () => {
  it('adds each list to the rows it names in the rows own buffer, and sorts every row, short and long', () => {
    const c = randomRows(2000, 100_000, 120, 3); // rows past INSERTION_ROW (24) and under it
    const buffer = new Uint32Array(c.ids.length + 5000);
    buffer.set(c.ids);
    const rows: Csr = { offsets: c.offsets, ids: buffer.subarray(0, c.ids.length) };
    const before = rowsOf(c);
    const rng = new Rng(4);
    const lists = [100_000, 100_001, 100_002].map((column) => ({ column, ids: Uint32Array.from(new Set(Array.from({ length: 1500 }, () => rng.int(2000)))).sort() }));
    const added = addLists(rows, lists, buffer);
    sortRows(added, 0, 2000);
    const expected = before.map((row, r) => [...row, ...lists.filter((l) => l.ids.includes(r)).map((l) => l.column)].sort((a, b) => a - b));
    expect(rowsOf(added)).toEqual(expected);
    expect(added.ids.buffer).toBe(buffer.buffer);
  });

  it('refuses a buffer that does not start where the rows do, or cannot hold them', () => {
    const c = randomRows(10, 50, 5, 5);
    expect(() => addLists(c, [], new Uint32Array(1000))).toThrow(/must start where the rows do/);
    const small: Csr = { offsets: c.offsets, ids: c.ids };
    expect(() => addLists(small, [{ column: 60, ids: Uint32Array.of(0, 1, 2) }], c.ids)).toThrow(/holds \d+, need \d+/);
  });
});
