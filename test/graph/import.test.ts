// Edge-list import: the real data sets' published figures, every accepted layout, every bad line.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../../sim/errors.js';
import { EdgeListParser } from '../../sim/graph/edge-list.js';
import { importCounts, importEdgeList } from '../../sim/graph/import.js';
import type { FollowerGraph } from '../../sim/graph/graph.js';
import { graphStats, type GraphStats } from '../../sim/graph/stats.js';
import { EGO_TWITTER, expectWellFormed, followees, followers, scratch, SLASHDOT } from './helpers.js';

const dir = scratch();

async function importError(name: string, text: string | Buffer): Promise<InputError> {
  const path = join(dir, name);
  writeFileSync(path, text);
  try {
    await importEdgeList(path);
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).line()).not.toContain('\n');
    return err as InputError;
  }
  throw new Error(`${name} imported without error`);
}

describe('importEdgeList on soc-Slashdot0902 (SNAP; Leskovec et al. 2009)', () => {
  let g: FollowerGraph;
  let s: GraphStats;
  beforeAll(async () => {
    g = await importEdgeList(SLASHDOT);
    s = graphStats(g, { source: SLASHDOT, thresholds: [100, 1000], top: 3 });
  });

  it('reads every line, drops the self-loops and keeps 82,168 nodes and 870,161 edges', () => {
    expect(importCounts(g)).toEqual({ lines: 948468, edgeLines: 948464, selfLoops: 78303, duplicates: 0 });
    expect(g.users).toBe(82168);
    expect(g.edges).toBe(870161);
    expect(g.provenance.format).toBe('edge list (gzip)');
    expectWellFormed(g);
    // SNAP ids are already 0..82167.
    expect(g.sourceIds![0]).toBe(0);
    expect(g.sourceIds![82167]).toBe(82167);
  });

  it('reproduces the follower figures of data/README.md', () => {
    expect(s.followers.max).toBe(2552);
    expect(s.followers.mean.toFixed(2)).toBe('10.59');
    expect(s.followers.median).toBe(2);
    expect(s.followers.p99).toBe(150);
    expect(s.followers.p999).toBe(419);
    expect(s.thresholds).toEqual([
      { followers: 100, accounts: 1451, share: 1451 / 82168 },
      { followers: 1000, accounts: 11, share: 11 / 82168 },
    ]);
    expect(s.reciprocity.toFixed(2)).toBe('0.84');
    expect(s.top[0]).toEqual({ id: 2494, name: null, sourceId: 2494, followers: 2552, followees: followees(g, 2494) });
  });

  it('reproduces the power-law tail of data/README.md: alpha 3.375 +- 0.145 at xmin 254', () => {
    const f = s.powerLaw!;
    expect(f.alpha.toFixed(3)).toBe('3.375');
    expect(f.sigma.toFixed(3)).toBe('0.145');
    expect(f.xmin).toBe(254);
    expect(f.nTail).toBe(270);
    expect(f.ks).toBeGreaterThan(0.019);
    expect(f.ks).toBeLessThan(0.021);
  });
});

describe('importEdgeList on KONECT ego-twitter (McAuley & Leskovec 2012)', () => {
  it('has 23,370 nodes, 33,101 edges, in-degree max 57 and median 1', async () => {
    const g = await importEdgeList(EGO_TWITTER);
    expect(g.users).toBe(23370);
    expect(g.edges).toBe(33101);
    expect(importCounts(g)).toEqual({ lines: 33101, edgeLines: 33101, selfLoops: 0, duplicates: 0 });
    const s = graphStats(g, { source: EGO_TWITTER });
    expect(s.followers.max).toBe(57);
    expect(s.followers.median).toBe(1);
    // KONECT ids start at 1; the dense ids keep their order.
    expect(g.sourceIds![0]).toBe(1);
    for (let i = 1; i < g.users; i++) expect(g.sourceIds![i]).toBeGreaterThan(g.sourceIds![i - 1]);
    expectWellFormed(g);
  });
});

describe('importEdgeList layouts', () => {
  // Ids 7 < 10 < 20 < 30 < 99 become 0..4. Edges: 10->20, 20->10, 10->30, 30->7, 7->99.
  const text = [
    '# a SNAP-style header',
    '% a KONECT-style header',
    '',
    '10\t20',
    '20 10 1.0 1262304000',
    '  10 \t 30  ',
    '10 30',
    '30\t7\t5',
    '99 99',
    '   ',
    '7 99',
  ].join('\r\n');

  async function check(path: string) {
    const g = await importEdgeList(path);
    expectWellFormed(g);
    expect(g.users).toBe(5);
    expect([...g.sourceIds!]).toEqual([7, 10, 20, 30, 99]);
    expect(g.edges).toBe(5);
    expect(importCounts(g)).toEqual({ lines: 11, edgeLines: 7, selfLoops: 1, duplicates: 1 });
    expect([...g.followeeIds.subarray(g.followeeOffsets[1], g.followeeOffsets[2])]).toEqual([2, 3]); // 10 follows 20, 30
    expect(followers(g, 4)).toBe(1); // 99: followed by 7; its self-loop dropped
    return g;
  }

  it('reads CRLF, tabs and spaces, comments, blank lines, extra columns, a last line without newline', async () => {
    const path = join(dir, 'mixed.txt');
    writeFileSync(path, text);
    await check(path);
  });

  it('reads the same file gzipped, whatever its name', async () => {
    const path = join(dir, 'mixed.data');
    writeFileSync(path, gzipSync(text));
    const g = await check(path);
    expect(g.provenance.format).toBe('edge list (gzip)');
  });

  it('skips a UTF-8 byte-order mark', async () => {
    const path = join(dir, 'bom.txt');
    writeFileSync(path, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('1 2\n2 3\n')]));
    expect((await importEdgeList(path)).edges).toBe(2);
  });

  it('adds both directions with undirected, merging pairs listed both ways', async () => {
    const path = join(dir, 'undirected.txt');
    writeFileSync(path, '1 2\n2 1\n2 3\n');
    const g = await importEdgeList(path, { undirected: true });
    expectWellFormed(g);
    expect(g.edges).toBe(4);
    expect(importCounts(g)!.duplicates).toBe(2);
  });

  it('remaps sparse and huge ids by sorting', async () => {
    const path = join(dir, 'huge.txt');
    writeFileSync(path, '9007199254740991 5\n5 4294967296\n4294967296 9007199254740991\n');
    const g = await importEdgeList(path);
    expect([...g.sourceIds!]).toEqual([5, 4294967296, 9007199254740991]);
    expect(g.edges).toBe(3);
    expectWellFormed(g);
  });
});

describe('importEdgeList errors', () => {
  it('names the file and the line of a non-numeric id', async () => {
    const e = await importError('letters.txt', '# header\n1 2\n3 4\n5 abc\n6 7\n');
    expect(e.where).toBe(join(dir, 'letters.txt:4'));
    expect(e.message).toBe('the target is not a node id (a non-negative integer), found "5 abc"');
  });

  it('names the line of a one-column line, a negative id and a decimal id', async () => {
    expect((await importError('one.txt', '1 2\r\n42\r\n')).line()).toBe(`${join(dir, 'one.txt')}:2: only one column; expected "source target", found "42"`);
    expect((await importError('one-last.txt', '1 2\n3')).where).toBe(join(dir, 'one-last.txt:2'));
    expect((await importError('neg.txt', '1 2\n-1 2\n')).message).toMatch(/^the source is not a node id/);
    expect((await importError('dec.txt', '1 2\n\n1.5 2\n')).where).toBe(join(dir, 'dec.txt:3'));
  });

  it('finds the bad line inside a gzipped file', async () => {
    const lines = Array.from({ length: 200000 }, (_, i) => `${i} ${i + 1}`);
    lines[150000] = '150000 x';
    const e = await importError('big.txt.gz', gzipSync(lines.join('\n')));
    expect(e.where).toBe(join(dir, 'big.txt.gz:150001'));
  });

  it('refuses a missing file, an empty one, and corrupt gzip data', async () => {
    await expect(importEdgeList(join(dir, 'missing.txt'))).rejects.toThrow('no such file');
    expect((await importError('empty.txt', '# only a comment\n\n')).message).toMatch(/^no edges/);
    const gz = gzipSync('1 2\n'.repeat(1000));
    gz[gz.length - 6] ^= 0xff; // the CRC of the gzip trailer
    expect((await importError('corrupt.gz', gz)).message).toMatch(/^corrupt gzip data/);
  });
});

describe('EdgeListParser', () => {
  it('gives the same edges and errors whatever the chunking', () => {
    const bytes = Buffer.from('# c\r\n1\t2\r\n  3 4 9\r\n\r\n5 6');
    const run = (size: number) => {
      const edges: number[] = [];
      const p = new EdgeListParser('f', (a, b) => edges.push(a, b));
      for (let i = 0; i < bytes.length; i += size) p.push(bytes.subarray(i, i + size));
      p.end();
      return { edges, lines: p.lines };
    };
    const whole = run(bytes.length);
    expect(whole).toEqual({ edges: [1, 2, 3, 4, 5, 6], lines: 5 });
    for (const size of [1, 2, 3, 7]) expect(run(size)).toEqual(whole);

    const bad = Buffer.from('1 2\n333 4x4\n');
    for (const size of [1, 5, bad.length]) {
      const p = new EdgeListParser('f', () => {});
      const feed = () => {
        for (let i = 0; i < bad.length; i += size) p.push(bad.subarray(i, i + size));
      };
      // The quote holds the line up to the bad byte at least (all of it when the chunk does).
      expect(feed).toThrow(/^the target is not a node id \(a non-negative integer\), found "333 4x/);
    }
  });
});
