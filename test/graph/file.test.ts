// The .fgraph format: round trips, and one clear error for every way a file can be wrong.
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../sim/errors.js';
import { isGraphFile, loadGraph, saveGraph } from '../../sim/graph/file.js';
import { generateGraph } from '../../sim/graph/generate.js';
import type { FollowerGraph } from '../../sim/graph/graph.js';
import { importEdgeList } from '../../sim/graph/import.js';
import { scratch } from './helpers.js';

const dir = scratch();
const generated = generateGraph({ users: 5000, avgFollows: 12, alpha: 2.2, maxFollows: 5000, followsSigma: 1, seed: 3, celebrities: [{ count: 2, followers: 0.5, name: 'ünïcode "star"' }] });
const good = join(dir, 'good.fgraph');
saveGraph(generated, good);

function expectSameGraph(a: FollowerGraph, b: FollowerGraph): void {
  expect(b.users).toBe(a.users);
  expect(b.edges).toBe(a.edges);
  expect(b.followerOffsets).toEqual(a.followerOffsets);
  expect(b.followerIds).toEqual(a.followerIds);
  expect(b.followeeOffsets).toEqual(a.followeeOffsets);
  expect(b.followeeIds).toEqual(a.followeeIds);
  expect([...b.names]).toEqual([...a.names]);
  expect(b.sourceIds).toEqual(a.sourceIds);
  expect(b.provenance).toEqual(a.provenance);
}

/** Write a variant of the good file and return the error loading it raises. */
function loadError(name: string, mutate: (bytes: Buffer) => Buffer): InputError {
  const path = join(dir, name);
  writeFileSync(path, mutate(Buffer.from(readFileSync(good))));
  try {
    loadGraph(path);
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    const e = err as InputError;
    expect(e.where).toBe(path);
    expect(e.line()).not.toContain('\n');
    return e;
  }
  throw new Error(`${name} loaded without error`);
}

describe('saveGraph / loadGraph', () => {
  it('round-trips a generated graph with names and provenance', () => {
    expect(isGraphFile(good)).toBe(true);
    expectSameGraph(generated, loadGraph(good));
  });

  it('round-trips an imported graph with its source ids, and an empty one', async () => {
    const edges = join(dir, 'edges.txt');
    writeFileSync(edges, '100 7\n7 100\n5000000000 7\n');
    const imported = await importEdgeList(edges);
    const path = join(dir, 'imported.fgraph');
    saveGraph(imported, path);
    const back = loadGraph(path);
    expectSameGraph(imported, back);
    expect([...back.sourceIds!]).toEqual([7, 100, 5000000000]);

    const empty: FollowerGraph = {
      users: 3,
      edges: 0,
      followerOffsets: new Uint32Array(4),
      followerIds: new Uint32Array(0),
      followeeOffsets: new Uint32Array(4),
      followeeIds: new Uint32Array(0),
      names: new Map(),
      provenance: {},
    };
    saveGraph(empty, join(dir, 'empty.fgraph'));
    expectSameGraph(empty, loadGraph(join(dir, 'empty.fgraph')));
  });

  it('writes atomically: no temporary file is left beside the graph', () => {
    const sub = join(dir, 'atomic');
    mkdirSync(sub);
    saveGraph(generated, join(sub, 'g.fgraph'));
    saveGraph(generated, join(sub, 'g.fgraph'));
    expect(readdirSync(sub)).toEqual(['g.fgraph']);
  });

  it('refuses a missing file', () => {
    const missing = join(dir, 'nope.fgraph');
    expect(() => loadGraph(missing)).toThrow(InputError);
    expect(() => loadGraph(missing)).toThrow('no such graph file');
    expect(isGraphFile(missing)).toBe(false);
  });

  it('refuses a file that is not a graph', () => {
    expect(loadError('text.fgraph', () => Buffer.from('0 1\n1 2\n')).message).toMatch(/^not a feedlab graph/);
    expect(loadError('tiny.fgraph', () => Buffer.from('FL')).message).toMatch(/^not a feedlab graph/);
  });

  it('refuses an unsupported format version', () => {
    const e = loadError('v9.fgraph', (b) => {
      b.writeUInt32LE(9, 8);
      return b;
    });
    expect(e.message).toBe('unsupported graph format version 9 (this feedlab reads version 1)');
  });

  it('refuses a truncated file, or one with bytes after the end', () => {
    expect(loadError('cut.fgraph', (b) => b.subarray(0, b.length - 100)).message).toMatch(/^corrupt graph file: truncated \(\d+ bytes, the header says \d+\)$/);
    expect(loadError('cut-header.fgraph', (b) => b.subarray(0, 30)).message).toMatch(/^corrupt graph file: truncated/);
    expect(loadError('long.fgraph', (b) => Buffer.concat([b, Buffer.from('xx')])).message).toMatch(/^corrupt graph file: 2 unexpected bytes/);
  });

  it('refuses a file with one flipped byte anywhere past the header: checksum mismatch', () => {
    const size = readFileSync(good).length;
    for (const at of [64, 1000, Math.floor(size / 2), size - 10, size - 1]) {
      const e = loadError(`flip-${at}.fgraph`, (b) => {
        b[at] ^= 0x10;
        return b;
      });
      expect(e.message).toMatch(/^corrupt graph file: checksum mismatch \(stored 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8}\)$/);
    }
  });
});
