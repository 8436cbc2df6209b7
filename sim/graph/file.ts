// The .fgraph file: a fixed header, both CSR directions as raw little-endian arrays, the names,
// the source ids and the provenance, then a CRC-32 of everything before it.
//
//   0  magic "FLGRAPH\0"     8  format version (u32)   12  flags (u32, bit 0: source ids)
//  16  users (u32)          20  reserved              24  edges (u64)
//  32  names bytes (u32)    36  provenance bytes (u32)  40..63 reserved (zero)
//  64  followerOffsets (users+1 u32) | followerIds (edges u32) | followeeOffsets | followeeIds
//      | sourceIds (users f64, if flagged) | names JSON [[id, name], ...] | provenance JSON
//      each section starts on an 8-byte boundary (zero padding)
//  end crc32 (u32) of every byte before it
//
// Arrays are read straight into their own typed arrays (no shared buffer, so no alignment
// trouble and no 4 GiB buffer limit) and written straight from them (no copy of the graph).

import { closeSync, fstatSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { makeDirs } from '../make-dirs.js';
import { endianness } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { crc32 } from 'node:zlib';
import { InputError } from '../errors.js';
import type { FollowerGraph } from './graph.js';

export const GRAPH_MAGIC = 'FLGRAPH\0';
export const GRAPH_FORMAT_VERSION = 1;
const HEADER_BYTES = 64;
const FLAG_SOURCE_IDS = 1;
/** Reads and writes go in pieces of this size: small enough that the CRC finds them still in cache. */
const CHUNK = 1 << 24;

if (endianness() !== 'LE') throw new Error('feedlab graph files are little-endian; this platform is not');

interface Layout {
  users: number;
  edges: number;
  hasSourceIds: boolean;
  namesBytes: number;
  provenanceBytes: number;
}

function pad8(n: number): number {
  return (8 - (n % 8)) % 8;
}

/** Byte sizes of the sections in file order; the file is their padded sum plus the header and the CRC. */
function sectionSizes(l: Layout): number[] {
  const offsets = (l.users + 1) * 4;
  const ids = l.edges * 4;
  return [offsets, ids, offsets, ids, l.hasSourceIds ? l.users * 8 : 0, l.namesBytes, l.provenanceBytes];
}

function fileSize(l: Layout): number {
  return sectionSizes(l).reduce((sum, n) => sum + n + pad8(n), HEADER_BYTES) + 4;
}

function bytesOf(a: ArrayBufferView): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/** Write the graph atomically: a temporary sibling, then a rename, so no reader sees half a file. */
export function saveGraph(g: FollowerGraph, path: string): void {
  const names = Buffer.from(JSON.stringify([...g.names].sort((a, b) => a[0] - b[0])), 'utf8');
  const provenance = Buffer.from(JSON.stringify(g.provenance), 'utf8');
  const layout: Layout = { users: g.users, edges: g.edges, hasSourceIds: g.sourceIds !== undefined, namesBytes: names.length, provenanceBytes: provenance.length };
  if (g.followerIds.length !== g.edges || g.followeeIds.length !== g.edges) throw new RangeError('saveGraph: edge arrays do not match the edge count');
  if (g.sourceIds && g.sourceIds.length !== g.users) throw new RangeError('saveGraph: one source id per user');
  const header = Buffer.alloc(HEADER_BYTES);
  header.write(GRAPH_MAGIC, 0, 'latin1');
  header.writeUInt32LE(GRAPH_FORMAT_VERSION, 8);
  header.writeUInt32LE(layout.hasSourceIds ? FLAG_SOURCE_IDS : 0, 12);
  header.writeUInt32LE(g.users, 16);
  header.writeBigUInt64LE(BigInt(g.edges), 24);
  header.writeUInt32LE(names.length, 32);
  header.writeUInt32LE(provenance.length, 36);
  const sections: Uint8Array[] = [
    bytesOf(g.followerOffsets),
    bytesOf(g.followerIds),
    bytesOf(g.followeeOffsets),
    bytesOf(g.followeeIds),
    g.sourceIds ? bytesOf(g.sourceIds) : new Uint8Array(0),
    names,
    provenance,
  ];

  makeDirs(dirname(path), path);
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  const fd = openSync(tmp, 'w');
  try {
    let crc = 0;
    const put = (bytes: Uint8Array) => {
      for (let at = 0; at < bytes.length; at += CHUNK) {
        const piece = bytes.subarray(at, Math.min(bytes.length, at + CHUNK));
        crc = crc32(piece, crc);
        let done = 0;
        while (done < piece.length) done += writeSync(fd, piece, done);
      }
    };
    const zeros = new Uint8Array(8);
    put(header);
    for (const s of sections) {
      put(s);
      put(zeros.subarray(0, pad8(s.length)));
    }
    const trailer = Buffer.alloc(4);
    trailer.writeUInt32LE(crc >>> 0, 0);
    put(trailer);
    closeSync(fd);
    renameSync(tmp, path);
  } catch (err) {
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** True when the file starts with the .fgraph magic (false for a missing or short file); a directory is an InputError. */
export function isGraphFile(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return false;
  }
  try {
    // reading it threw EISDIR without a path: "internal error", exit 70
    if (fstatSync(fd).isDirectory()) throw new InputError('is a directory, not a file', path);
    const head = Buffer.alloc(8);
    return readSync(fd, head, 0, 8, 0) === 8 && head.toString('latin1') === GRAPH_MAGIC;
  } finally {
    closeSync(fd);
  }
}

/** Read a graph saved by saveGraph; every way the file can be wrong is one InputError line. */
export function loadGraph(path: string): FollowerGraph {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw openError(err as NodeJS.ErrnoException, path);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new InputError('not a regular file, so not a graph file', path);
    const size = stat.size;
    const header = Buffer.alloc(HEADER_BYTES);
    const got = readSync(fd, header, 0, HEADER_BYTES, 0);
    if (got < 8 || header.toString('latin1', 0, 8) !== GRAPH_MAGIC) {
      throw new InputError('not a feedlab graph (no FLGRAPH header); edge lists go through "feedlab graph import"', path);
    }
    if (got < HEADER_BYTES) throw new InputError(`corrupt graph file: truncated (${size} bytes, shorter than the ${HEADER_BYTES}-byte header)`, path);
    const version = header.readUInt32LE(8);
    if (version !== GRAPH_FORMAT_VERSION) {
      throw new InputError(`unsupported graph format version ${version} (this feedlab reads version ${GRAPH_FORMAT_VERSION})`, path);
    }
    const edges = Number(header.readBigUInt64LE(24));
    const layout: Layout = {
      users: header.readUInt32LE(16),
      edges,
      hasSourceIds: (header.readUInt32LE(12) & FLAG_SOURCE_IDS) !== 0,
      namesBytes: header.readUInt32LE(32),
      provenanceBytes: header.readUInt32LE(36),
    };
    const expected = fileSize(layout);
    if (size < expected) throw new InputError(`corrupt graph file: truncated (${size} bytes, the header says ${expected})`, path);
    if (size > expected) throw new InputError(`corrupt graph file: ${size - expected} unexpected bytes after the end (the header says ${expected})`, path);
    if (edges > 0xffffffff) throw new InputError(`corrupt graph file: header says ${edges} edges, more than a graph holds`, path);

    let position = HEADER_BYTES;
    let crc = crc32(header);
    const fill = (bytes: Uint8Array) => {
      for (let at = 0; at < bytes.length; ) {
        const n = readSync(fd, bytes, at, Math.min(CHUNK, bytes.length - at), position);
        if (n === 0) throw new InputError(`corrupt graph file: truncated while reading at byte ${position}`, path);
        crc = crc32(bytes.subarray(at, at + n), crc);
        at += n;
        position += n;
      }
    };
    const padding = new Uint8Array(8);
    const section = <T extends ArrayBufferView>(array: T): T => {
      fill(bytesOf(array));
      fill(padding.subarray(0, pad8(array.byteLength)));
      return array;
    };
    const followerOffsets = section(new Uint32Array(layout.users + 1));
    const followerIds = section(new Uint32Array(edges));
    const followeeOffsets = section(new Uint32Array(layout.users + 1));
    const followeeIds = section(new Uint32Array(edges));
    const sourceIds = layout.hasSourceIds ? section(new Float64Array(layout.users)) : undefined;
    const namesBytes = section(new Uint8Array(layout.namesBytes));
    const provenanceBytes = section(new Uint8Array(layout.provenanceBytes));
    const trailer = Buffer.alloc(4);
    readSync(fd, trailer, 0, 4, position);
    const stored = trailer.readUInt32LE(0);
    if (stored !== crc >>> 0) {
      throw new InputError(`corrupt graph file: checksum mismatch (stored ${hex(stored)}, computed ${hex(crc >>> 0)})`, path);
    }
    checkOffsets(followerOffsets, edges, 'follower', path);
    checkOffsets(followeeOffsets, edges, 'followee', path);
    let names: [number, string][];
    let provenance: Record<string, string | number>;
    try {
      names = JSON.parse(Buffer.from(namesBytes).toString('utf8'));
      provenance = JSON.parse(Buffer.from(provenanceBytes).toString('utf8'));
    } catch {
      throw new InputError('corrupt graph file: unreadable names or provenance', path);
    }
    return {
      users: layout.users,
      edges,
      followerOffsets,
      followerIds,
      followeeOffsets,
      followeeIds,
      names: new Map(names),
      sourceIds,
      provenance,
    };
  } finally {
    closeSync(fd);
  }
}

/** A file that passed its checksum but was written wrong still must not index out of bounds later. */
function checkOffsets(offsets: Uint32Array, edges: number, what: string, path: string): void {
  const n = offsets.length - 1;
  if (offsets[0] !== 0 || offsets[n] !== edges) throw new InputError(`corrupt graph file: ${what} offsets do not span the ${edges} edges`, path);
  for (let i = 0; i < n; i++) {
    if (offsets[i] > offsets[i + 1]) throw new InputError(`corrupt graph file: ${what} offsets decrease at account ${i}`, path);
  }
}

function openError(err: NodeJS.ErrnoException, path: string): InputError {
  if (err.code === 'ENOENT') return new InputError('no such graph file', path);
  if (err.code === 'EACCES') return new InputError('permission denied', path);
  return new InputError(`cannot open graph file (${err.code ?? err.message})`, path);
}

function hex(n: number): string {
  return `0x${n.toString(16).padStart(8, '0')}`;
}
