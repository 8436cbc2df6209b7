// Compressed sparse rows on typed arrays: counting-sort transposes (whole, or in row ranges that
// threads can share), lists added to rows in place, rows sorted, and in-place de-duplication. A
// transpose's rows come out sorted ascending because it walks its source rows in id order.

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

/** Row boundaries cutting `offsets`' rows into `parts` runs of about equal entries (parts + 1 of them, from 0 to the row count). */
export function equalShares(offsets: Uint32Array, parts: number): Uint32Array {
  const rows = offsets.length - 1;
  const bounds = new Uint32Array(parts + 1);
  let r = 0;
  for (let k = 1; k < parts; k++) {
    const at = Math.floor((offsets[rows] * k) / parts);
    while (r < rows && offsets[r] < at) r++;
    bounds[k] = r;
  }
  bounds[parts] = rows;
  return bounds;
}

/** A column given whole (a celebrity and its followers). */
export interface ColumnList {
  column: number;
  ids: Uint32Array;
}

/** Add the column ids of rows [from, to) to `counts` (one count per column). */
export function countColumns(rows: Csr, from: number, to: number, counts: Uint32Array): void {
  const src = rows.ids;
  const end = rows.offsets[to];
  for (let e = rows.offsets[from]; e < end; e++) counts[src[e]]++;
}

/**
 * The transpose's offsets from the column counts of consecutive row ranges (counts[k] for range k),
 * each counts[k] turned in place into range k's write cursor: where its first entry of each column
 * goes, after every earlier range's.
 */
export function transposeCursors(counts: Uint32Array[], columns: number): Uint32Array {
  const total = new Uint32Array(columns);
  for (const c of counts) for (let i = 0; i < columns; i++) total[i] += c[i];
  const offsets = offsetsFromCounts(total);
  if (counts.length === 1) counts[0].set(offsets.subarray(0, columns));
  else {
    for (let i = 0; i < columns; i++) {
      let at = offsets[i];
      for (const c of counts) {
        const n = c[i];
        c[i] = at;
        at += n;
      }
    }
  }
  return offsets;
}

/** Write rows [from, to) into their columns of `ids`, advancing `cursor` (from transposeCursors). */
export function scatterRows(rows: Csr, from: number, to: number, cursor: Uint32Array, ids: Uint32Array): void {
  const src = rows.ids;
  const off = rows.offsets;
  for (let r = from; r < to; r++) {
    const end = off[r + 1];
    for (let e = off[r]; e < end; e++) ids[cursor[src[e]]++] = r;
  }
}

/**
 * The reverse of `rows` (row r lists columns c => column c lists rows r), each list ascending.
 * `columns` is the number of distinct column ids; `into` may supply the output id buffer (it must
 * not be rows.ids, and must hold exactly the edge count).
 */
export function transpose(rows: Csr, columns: number, into?: Uint32Array): Csr {
  const rowCount = rows.offsets.length - 1;
  const cursor = new Uint32Array(columns);
  countColumns(rows, 0, rowCount, cursor);
  const offsets = transposeCursors([cursor], columns);
  const ids = into ?? new Uint32Array(offsets[columns]);
  if (ids.length !== offsets[columns]) throw new RangeError(`transpose buffer holds ${ids.length}, need ${offsets[columns]}`);
  scatterRows(rows, 0, rowCount, cursor, ids);
  return { offsets, ids };
}

/**
 * `rows` with each list's column added to the rows its ids name (row u gets column c when u is in
 * c's list), in the rows' own buffer: `buffer` starts where rows.ids does and holds every entry.
 * Rows move towards the end (never over a row not yet moved, walking from the last) and the
 * columns follow each row's own entries; sortRows puts each row in order.
 */
export function addLists(rows: Csr, lists: readonly ColumnList[], buffer: Uint32Array): Csr {
  if (rows.ids.buffer !== buffer.buffer || rows.ids.byteOffset !== buffer.byteOffset) throw new RangeError('addLists: the buffer must start where the rows do');
  const n = rows.offsets.length - 1;
  const from = rows.offsets;
  const cursor = new Uint32Array(n);
  for (const l of lists) for (let k = 0; k < l.ids.length; k++) cursor[l.ids[k]]++;
  const offsets = new Uint32Array(n + 1);
  let sum = 0;
  for (let u = 0; u < n; u++) {
    offsets[u] = sum;
    sum += from[u + 1] - from[u] + cursor[u];
  }
  if (sum > MAX_EDGES) throw new RangeError(`graph too large: ${sum} edges (at most ${MAX_EDGES})`);
  offsets[n] = sum;
  if (sum > buffer.length) throw new RangeError(`addLists: the buffer holds ${buffer.length}, need ${sum}`);
  for (let u = n - 1; u >= 0 && offsets[u] !== from[u]; u--) buffer.copyWithin(offsets[u], from[u], from[u + 1]);
  for (let u = 0; u < n; u++) cursor[u] = offsets[u] + from[u + 1] - from[u];
  for (const l of lists) for (let k = 0; k < l.ids.length; k++) buffer[cursor[l.ids[k]]++] = l.column;
  return { offsets, ids: buffer.subarray(0, sum) };
}

/**
 * Rows up to this long are put in order by insertion (no subarray, no call); longer ones by the
 * typed array's sort. 8, 16, 24 and 48 sorted a 1M / 20M graph's followee rows alike (409-431 ms,
 * one run each, 2026-12-07).
 */
const INSERTION_ROW = 24;

/** Each of rows [from, to) in ascending order, in place. */
export function sortRows(rows: Csr, from: number, to: number): void {
  const { offsets, ids } = rows;
  for (let r = from; r < to; r++) {
    const start = offsets[r];
    const end = offsets[r + 1];
    if (end - start > INSERTION_ROW) {
      ids.subarray(start, end).sort();
      continue;
    }
    for (let i = start + 1; i < end; i++) {
      const v = ids[i];
      let j = i - 1;
      while (j >= start && ids[j] > v) {
        ids[j + 1] = ids[j];
        j--;
      }
      ids[j + 1] = v;
    }
  }
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
