// A streaming parser for SNAP/KONECT edge lists: "source target [anything else]" per line, any
// mix of spaces and tabs, CRLF or LF, "#" and "%" comment lines, blank lines. It works on raw
// bytes, chunk by chunk, so a file of hundreds of millions of lines never becomes strings.

import { InputError } from '../errors.js';

const LF = 10;
const CR = 13;
const SPACE = 32;
const TAB = 9;
const HASH = 35;
const PERCENT = 37;
const ZERO = 48;
const NINE = 57;

const enum State {
  LineStart,
  Source,
  Gap,
  Target,
  Skip,
}

/** Called once per data line with the two ids as written. */
export type EdgeSink = (source: number, target: number) => void;

export class EdgeListParser {
  /** The line being read (1-based). */
  line = 1;
  dataLines = 0;
  private state = State.LineStart;
  private a = 0;
  private b = 0;
  /** The current line's bytes from earlier chunks (only for error messages). */
  private carry: Uint8Array = new Uint8Array(0);
  /** Bytes seen since the last newline. */
  private pending = false;
  private atStart = true;

  constructor(private readonly file: string, private readonly sink: EdgeSink) {}

  push(chunk: Uint8Array): void {
    if (this.atStart && chunk.length > 0) {
      // A UTF-8 byte-order mark, as some editors write, is not part of the first line.
      if (chunk.length >= 3 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) chunk = chunk.subarray(3);
      this.atStart = false;
    }
    let state = this.state;
    let a = this.a;
    let b = this.b;
    let lineStart = 0;
    const n = chunk.length;
    for (let i = 0; i < n; i++) {
      const c = chunk[i];
      if (c === LF) {
        if (state === State.Source || state === State.Gap) this.fail(chunk, lineStart, 'only one column; expected "source target"');
        if (state === State.Target) this.emit(a, b, chunk, lineStart);
        state = State.LineStart;
        this.line++;
        lineStart = i + 1;
        this.carry = EMPTY;
        continue;
      }
      const blank = c === SPACE || c === TAB || c === CR;
      const digit = c >= ZERO && c <= NINE;
      switch (state) {
        case State.LineStart:
          if (digit) {
            a = c - ZERO;
            state = State.Source;
          } else if (c === HASH || c === PERCENT) state = State.Skip;
          else if (!blank) this.fail(chunk, lineStart, 'the source is not a node id (a non-negative integer)');
          break;
        case State.Source:
          if (digit) a = a * 10 + (c - ZERO);
          else if (blank) state = State.Gap;
          else this.fail(chunk, lineStart, 'the source is not a node id (a non-negative integer)');
          break;
        case State.Gap:
          if (digit) {
            b = c - ZERO;
            state = State.Target;
          } else if (!blank) this.fail(chunk, lineStart, 'the target is not a node id (a non-negative integer)');
          break;
        case State.Target:
          if (digit) b = b * 10 + (c - ZERO);
          else if (blank) {
            this.emit(a, b, chunk, lineStart);
            state = State.Skip; // extra columns (weights, timestamps) are ignored
          } else this.fail(chunk, lineStart, 'the target is not a node id (a non-negative integer)');
          break;
        case State.Skip:
          break;
      }
    }
    if (lineStart < n) this.carry = concatShort(this.carry, chunk.subarray(lineStart));
    if (n > 0) this.pending = lineStart < n;
    this.state = state;
    this.a = a;
    this.b = b;
  }

  /** The input is over: a last line without a newline still counts. */
  end(): void {
    const none = new Uint8Array(0);
    if (this.state === State.Source || this.state === State.Gap) this.fail(none, 0, 'only one column; expected "source target"');
    if (this.state === State.Target) this.emit(this.a, this.b, none, 0);
    this.state = State.LineStart;
  }

  /** Lines read (a last line without a newline counts). */
  get lines(): number {
    return this.line - 1 + (this.pending ? 1 : 0);
  }

  private emit(a: number, b: number, chunk: Uint8Array, lineStart: number): void {
    if (a > Number.MAX_SAFE_INTEGER || b > Number.MAX_SAFE_INTEGER) this.fail(chunk, lineStart, `node id too large (at most ${Number.MAX_SAFE_INTEGER})`);
    this.dataLines++;
    this.sink(a, b);
  }

  private fail(chunk: Uint8Array, lineStart: number, what: string): never {
    let end = lineStart;
    while (end < chunk.length && chunk[end] !== LF && end - lineStart < 120) end++;
    const text = Buffer.from(concatShort(this.carry, chunk.subarray(lineStart, end))).toString('utf8').replace(/\r$/, '');
    throw new InputError(`${what}, found ${JSON.stringify(text.length > 80 ? text.slice(0, 80) + '...' : text)}`, `${this.file}:${this.line}`);
  }
}

const EMPTY = new Uint8Array(0);

/** Join two byte runs, keeping at most 200 bytes: enough to quote a bad line. */
function concatShort(a: Uint8Array, b: Uint8Array): Uint8Array {
  const keep = Math.min(b.length, Math.max(0, 200 - a.length));
  if (keep === 0) return a;
  const out = new Uint8Array(a.length + keep);
  out.set(a);
  out.set(b.subarray(0, keep), a.length);
  return out;
}
