// Compressed sparse rows on typed arrays: counting-sort transposes and in-place
// de-duplication. Rows come out sorted ascending because every transpose walks
// its source rows in id order.

export interface Csr {
  offsets: Uint32Array;
  ids: Uint32Array;
}

/** Offsets are Uint32: a graph holds at most this many edges. */
export const MAX_EDGES = 0xffffffff;

/** Offsets from per-row counts (an exclusive prefix sum with the total at the end). */
export function offsetsFromCounts(counts: Uint32Array): Uint32Array {
  const offsets = new Uint32Array(counts.length + 1);
  let sum = 0;
  for (let i = 0; i < counts.length; i++) {
    offsets[i] = sum;
    sum += counts[i];
  }
  if (sum > MAX_EDGES) throw new RangeError(`graph too large: ${sum} edges (at most ${MAX_EDGES})`);
  offsets[counts.length] = sum;
  return offsets;
}

/**
 * The reverse of `rows` (row r lists columns c => column c lists rows r), each list ascending.
 * `columns` is the number of distinct column ids; `into` may supply the output id buffer
 * (it must not be rows.ids, and must hold exactly the edge count).
 */
export function transpose(rows: Csr, columns: number, into?: Uint32Array): Csr {
  const rowCount = rows.offsets.length - 1;
  const edges = rows.offsets[rowCount];
  const counts = new Uint32Array(columns);
  const src = rows.ids;
  for (let e = 0; e < edges; e++) counts[src[e]]++;
  const offsets = offsetsFromCounts(counts);
  const ids = into ?? new Uint32Array(edges);
  if (ids.length !== edges) throw new RangeError(`transpose buffer holds ${ids.length}, need ${edges}`);
  // Reuse the counts array as the write cursor of each column.
  const cursor = counts;
  cursor.set(offsets.subarray(0, columns));
  const off = rows.offsets;
  for (let r = 0; r < rowCount; r++) {
    const end = off[r + 1];
    for (let e = off[r]; e < end; e++) ids[cursor[src[e]]++] = r;
  }
  return { offsets, ids };
}

/**
 * The transpose of `rows`, plus whole lists for columns that have no entries in `rows` (accounts
 * that chose their followers): the lists are copied in as they are.
 */
export function transposeWithLists(rows: Csr, columns: number, lists: { column: number; ids: Uint32Array }[]): Csr {
  const rowCount = rows.offsets.length - 1;
  const src = rows.ids.subarray(0, rows.offsets[rowCount]);
  const counts = new Uint32Array(columns);
  for (let e = 0; e < src.length; e++) counts[src[e]]++;
  for (const l of lists) {
    if (counts[l.column] !== 0) throw new RangeError(`column ${l.column} has entries and a list`);
    counts[l.column] = l.ids.length;
  }
  const offsets = offsetsFromCounts(counts);
  const ids = new Uint32Array(offsets[columns]);
  for (const l of lists) ids.set(l.ids, offsets[l.column]);
  const cursor = counts;
  cursor.set(offsets.subarray(0, columns));
  const off = rows.offsets;
  for (let r = 0; r < rowCount; r++) {
    const end = off[r + 1];
    for (let e = off[r]; e < end; e++) ids[cursor[src[e]]++] = r;
  }
  return { offsets, ids };
}

/**
 * Remove repeated ids within each row of a CSR whose rows are sorted, compacting in place.
 * Returns the new CSR (ids is a view on the same buffer) and how many entries were dropped.
 */
export function dedupeSortedRows(rows: Csr): { csr: Csr; removed: number } {
  const n = rows.offsets.length - 1;
  const { offsets, ids } = rows;
  let write = 0;
  let start = offsets[0];
  for (let r = 0; r < n; r++) {
    const end = offsets[r + 1];
    offsets[r] = write;
    let prev = -1;
    for (let e = start; e < end; e++) {
      const v = ids[e];
      if (v !== prev) ids[write++] = v;
      prev = v;
    }
    start = end;
  }
  const removed = offsets[n] - write;
  offsets[n] = write;
  return { csr: { offsets, ids: ids.subarray(0, write) }, removed };
}
