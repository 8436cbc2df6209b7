// Postgres binary COPY (https://www.postgresql.org/docs/15/sql-copy.html, "Binary Format"): the
// framing, the timestamptz field, and streaming chunks into a COPY ... FROM STDIN. Used by the
// graph loader (bulk-load.ts) and the post seeder (seed-posts.ts).
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

const COPY_SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
export const COPY_HEADER = Buffer.concat([COPY_SIGNATURE, Buffer.alloc(8)]); // flags 0, header extension length 0
export const COPY_TRAILER = Buffer.from([0xff, 0xff]);
/** Rows are encoded into chunks of about this size (no string per row, no whole-table buffer). */
export const CHUNK_BYTES = 1 << 20;

const PG_EPOCH_MS = Date.UTC(2000, 0, 1);
const TWO_32 = 2 ** 32;

/** Whether ms since the Unix epoch can be written as a timestamptz exactly (its microseconds since
 * 2000 a safe integer: about the years 1715 to 2285). */
export function isCopyTime(ms: number): boolean {
  return Number.isFinite(ms) && Math.abs(ms - PG_EPOCH_MS) * 1000 <= Number.MAX_SAFE_INTEGER;
}

/** A timestamptz value (microseconds since 2000-01-01 UTC, big-endian int64) at `at`, without its
 * length word; the offset after it. `ms` must pass isCopyTime. */
export function writeTimestamp(buf: Buffer, at: number, ms: number): number {
  const us = Math.round((ms - PG_EPOCH_MS) * 1000);
  const hi = Math.floor(us / TWO_32);
  buf.writeInt32BE(hi, at);
  buf.writeUInt32BE(us - hi * TWO_32, at + 4);
  return at + 8;
}

/**
 * A COPY stream of `rows` rows: the header, the rows in chunks of about CHUNK_BYTES (each row written
 * by `write(chunk, at, i)`, which returns the offset after it and writes at most maxRowBytes), the
 * trailer. `progress(rowsDone)` is called as each chunk is handed over.
 */
export function* copyRows(rows: number, maxRowBytes: number, write: (chunk: Buffer, at: number, i: number) => number, progress: (rows: number) => void): Generator<Buffer> {
  yield COPY_HEADER;
  let chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  let at = 0;
  for (let i = 0; i < rows; i++) {
    if (at + maxRowBytes > CHUNK_BYTES) {
      progress(i);
      yield chunk.subarray(0, at);
      chunk = Buffer.allocUnsafe(CHUNK_BYTES);
      at = 0;
    }
    at = write(chunk, at, i);
  }
  progress(rows);
  yield chunk.subarray(0, at);
  yield COPY_TRAILER;
}

/** An int8 field (length word and value) of a non-negative whole number below 2^32; the offset after it. */
export function writeInt8Field(buf: Buffer, at: number, v: number): number {
  at = buf.writeInt32BE(8, at);
  at = buf.writeUInt32BE(0, at);
  return buf.writeUInt32BE(v, at);
}

/** A timestamptz value on its own (8 bytes). */
export function timestampBytes(ms: number): Buffer {
  const b = Buffer.alloc(8);
  writeTimestamp(b, 0, ms);
  return b;
}

/** Stream the chunks (header, rows, trailer) into `COPY ... FROM STDIN (FORMAT binary)`; the rows stored. */
export async function copyIn(client: pg.PoolClient, sql: string, chunks: Iterable<Buffer>): Promise<number> {
  const stream = client.query(copyFrom(sql));
  await pipeline(Readable.from(chunks), stream);
  return stream.rowCount;
}
