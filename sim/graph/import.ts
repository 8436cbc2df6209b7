// Import a real follower graph from a SNAP/KONECT edge list (plain or gzip): ids remapped densely
// in ascending order of the ids in the file, self-loops dropped, duplicate edges merged.

import { closeSync, openSync, readSync, statSync, createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';
import type { Readable } from 'node:stream';
import { InputError } from '../errors.js';
import type { FollowerGraph } from './graph.js';
import { dedupeSortedRows, MAX_EDGES, offsetsFromCounts, transpose } from './csr.js';
import { EdgeListParser } from './edge-list.js';

export interface ImportOptions {
  /** Every line is a mutual follow: add both directions. */
  undirected?: boolean;
  onProgress?: (fraction: number, detail: string) => void;
}

/** What the import saw; also kept in the graph's provenance. */
export interface ImportCounts {
  lines: number;
  edgeLines: number;
  selfLoops: number;
  duplicates: number;
}

export async function importEdgeList(path: string, opts: ImportOptions = {}): Promise<FollowerGraph> {
  const { size, gzip } = inspect(path);
  const pairs = new PairList();
  const loopIds = new PairList(); // ids seen only on self-loops are accounts too
  const parser = new EdgeListParser(path, (a, b) => {
    if (a === b) loopIds.push(a, a);
    else pairs.push(a, b);
  });
  await readAll(path, gzip, size, parser, opts.onProgress);
  if (parser.dataLines === 0) throw new InputError('no edges: the file holds only comments or blank lines', path);

  const { users, sourceIds, dense } = remapIds(pairs, loopIds);
  const edgeCount = opts.undirected ? 2 * pairs.length : pairs.length;
  if (edgeCount > MAX_EDGES) throw new InputError(`${edgeCount} edges is more than the ${MAX_EDGES} a graph can hold`, path);
  opts.onProgress?.(0.97, 'building adjacency');
  const { graph, duplicates } = buildGraph(users, dense, pairs.length, opts.undirected === true);
  const counts: ImportCounts = { lines: parser.lines, edgeLines: parser.dataLines, selfLoops: loopIds.length, duplicates };
  return {
    ...graph,
    names: new Map(),
    sourceIds,
    provenance: {
      source: path,
      format: gzip ? 'edge list (gzip)' : 'edge list',
      direction: opts.undirected ? 'undirected' : 'directed',
      ...counts,
    },
  };
}

/** The import's counts, read back from a graph's provenance (undefined for generated graphs). */
export function importCounts(g: FollowerGraph): ImportCounts | undefined {
  const p = g.provenance;
  if (typeof p.lines !== 'number') return undefined;
  return { lines: p.lines, edgeLines: Number(p.edgeLines), selfLoops: Number(p.selfLoops), duplicates: Number(p.duplicates) };
}

function inspect(path: string): { size: number; gzip: boolean } {
  let size: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw new InputError('not a regular file', path);
    size = st.size;
  } catch (err) {
    if (err instanceof InputError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new InputError(code === 'ENOENT' ? 'no such file' : `cannot read (${code})`, path);
  }
  const head = Buffer.alloc(2);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, head, 0, 2, 0);
  } finally {
    closeSync(fd);
  }
  return { size, gzip: head[0] === 0x1f && head[1] === 0x8b };
}

async function readAll(path: string, gzip: boolean, size: number, parser: EdgeListParser, onProgress?: ImportOptions['onProgress']): Promise<void> {
  const file = createReadStream(path, { highWaterMark: 1 << 20 });
  let read = 0;
  file.on('data', (chunk) => {
    read += chunk.length;
  });
  let source: Readable = file;
  if (gzip) source = file.pipe(createGunzip());
  try {
    for await (const chunk of source) {
      parser.push(chunk as Buffer);
      onProgress?.(size > 0 ? 0.95 * (read / size) : 0, `line ${parser.lines.toLocaleString('en-US')}`);
    }
  } catch (err) {
    file.destroy();
    if (err instanceof InputError) throw err;
    const e = err as NodeJS.ErrnoException;
    if (gzip && (e.code === 'Z_DATA_ERROR' || e.code === 'Z_BUF_ERROR' || e.errno === -5)) {
      throw new InputError(`corrupt gzip data near line ${parser.line} (${e.message})`, path);
    }
    throw new InputError(`read failed near line ${parser.line} (${e.code ?? e.message})`, path);
  }
  parser.end();
}

/** A growable list of id pairs; Uint32 while every id fits, Float64 after. */
class PairList {
  data: Uint32Array | Float64Array = new Uint32Array(1024);
  length = 0;

  push(a: number, b: number): void {
    if (2 * this.length === this.data.length) this.grow(this.data instanceof Uint32Array);
    if ((a > 0xffffffff || b > 0xffffffff) && this.data instanceof Uint32Array) this.grow(false);
    this.data[2 * this.length] = a;
    this.data[2 * this.length + 1] = b;
    this.length++;
  }

  private grow(keepType: boolean): void {
    const bigger = keepType && this.data instanceof Uint32Array ? new Uint32Array(this.data.length * 2) : new Float64Array(this.data.length * 2);
    bigger.set(this.data);
    this.data = bigger;
  }
}

/**
 * Dense ids 0..users-1 in ascending order of the file's ids. A direct lookup table when the
 * file's ids are reasonably compact (the usual case), sorting otherwise.
 */
function remapIds(pairs: PairList, loops: PairList): { users: number; sourceIds: Float64Array; dense: Uint32Array } {
  const lists = [pairs, loops];
  let max = 0;
  let endpoints = 0;
  for (const l of lists) {
    for (let i = 0; i < 2 * l.length; i++) if (l.data[i] > max) max = l.data[i];
    endpoints += 2 * l.length;
  }
  let sourceIds: Float64Array;
  let denseOf: (id: number) => number;
  if (max < 0x7fffffff && max <= 4 * endpoints + 1024) {
    const table = new Int32Array(max + 1).fill(-1);
    for (const l of lists) for (let i = 0; i < 2 * l.length; i++) table[l.data[i]] = 0;
    let users = 0;
    for (let id = 0; id <= max; id++) if (table[id] === 0) table[id] = users++;
    sourceIds = new Float64Array(users);
    for (let id = 0; id <= max; id++) if (table[id] >= 0) sourceIds[table[id]] = id;
    denseOf = (id) => table[id];
  } else {
    const all = new Float64Array(endpoints);
    let k = 0;
    for (const l of lists) for (let i = 0; i < 2 * l.length; i++) all[k++] = l.data[i];
    all.sort();
    let users = 0;
    for (let i = 0; i < all.length; i++) if (i === 0 || all[i] !== all[i - 1]) all[users++] = all[i];
    sourceIds = all.slice(0, users);
    denseOf = (id) => {
      let lo = 0;
      let hi = sourceIds.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (sourceIds[mid] < id) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    };
  }
  const dense = new Uint32Array(2 * pairs.length);
  for (let i = 0; i < dense.length; i++) dense[i] = denseOf(pairs.data[i]);
  return { users: sourceIds.length, sourceIds, dense };
}

/**
 * Both CSR directions from dense (source, target) pairs: follower lists by counting sort, the
 * transpose gives followee lists in ascending order, where duplicates sit side by side.
 */
function buildGraph(users: number, pairs: Uint32Array, count: number, undirected: boolean) {
  const inDegree = new Uint32Array(users);
  for (let i = 0; i < count; i++) {
    inDegree[pairs[2 * i + 1]]++;
    if (undirected) inDegree[pairs[2 * i]]++;
  }
  const followerOffsets = offsetsFromCounts(inDegree);
  const followerIds = new Uint32Array(followerOffsets[users]);
  const cursor = inDegree;
  cursor.set(followerOffsets.subarray(0, users));
  for (let i = 0; i < count; i++) {
    const a = pairs[2 * i];
    const b = pairs[2 * i + 1];
    followerIds[cursor[b]++] = a;
    if (undirected) followerIds[cursor[a]++] = b;
  }
  const sortedFollowees = transpose({ offsets: followerOffsets, ids: followerIds }, users);
  const { csr: followees, removed } = dedupeSortedRows(sortedFollowees);
  const followeeIds = removed > 0 ? followees.ids.slice() : followees.ids;
  const followers = transpose({ offsets: followees.offsets, ids: followeeIds }, users, removed > 0 ? undefined : followerIds);
  return {
    graph: {
      users,
      edges: followeeIds.length,
      followerOffsets: followers.offsets,
      followerIds: followers.ids,
      followeeOffsets: followees.offsets,
      followeeIds,
    },
    // Undirected lines listed both ways ("a b" and "b a") merge into one pair of edges.
    duplicates: removed,
  };
}
