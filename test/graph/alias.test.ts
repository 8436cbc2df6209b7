// Alias tables built in a scratch (sim/graph/alias.ts AliasScratch), as a block's urn rebuilds them:
// the same bytes as a table built in fresh arrays, whatever the scratch held before, and the draws
// the same.
import { describe, expect, it } from 'vitest';
import { Rng } from '../../core/random.js';
import { AliasSampler, AliasScratch, buildAliasTable, type AliasTable } from '../../sim/graph/alias.js';

const bytes = (t: AliasTable) => Array.from(t.columns);

describe('alias tables in a scratch', () => {
  it('are the fresh tables byte for byte, build after build, larger and smaller', () => {
    const scratch = new AliasScratch();
    const rng = new Rng(5);
    for (const n of [10, 1_000, 3, 1_000, 50_000, 7]) {
      const w = Float64Array.from({ length: n }, (_, i) => (i % 4 === 3 ? 0 : Math.floor(rng.float() * 100) + (i === 0 ? 1 : 0)));
      const labels = Uint32Array.from({ length: n }, (_, i) => 2 * i + 1);
      expect(bytes(buildAliasTable(w, labels, scratch))).toEqual(bytes(buildAliasTable(w, labels)));
    }
  });

  it('leave no alias of the build before on a column that keeps itself', () => {
    const scratch = new AliasScratch();
    // column 5 is small and paired here (its alias a large column)...
    const before = buildAliasTable(Float64Array.from([1, 1, 1, 1, 1, 0.1, 10, 1]), undefined, scratch);
    expect(before.columns[2 * 5 + 1]).not.toBe(0);
    // ...and keeps itself in an even table, where a fresh build leaves every alias 0
    const even = Float64Array.from({ length: 8 }, () => 1);
    expect(bytes(buildAliasTable(even, undefined, scratch))).toEqual(bytes(buildAliasTable(even)));
  });

  it('draw what fresh tables draw', () => {
    const w = Float64Array.from({ length: 2_000 }, (_, i) => 1 / (i + 1));
    const scratch = new AliasScratch();
    buildAliasTable(Float64Array.from({ length: 3_000 }, (_, i) => i % 7), undefined, scratch);
    const a = new AliasSampler(buildAliasTable(w, undefined, scratch), new Rng(9));
    const b = new AliasSampler(buildAliasTable(w), new Rng(9));
    const drawsA = Array.from({ length: 5_000 }, () => a.next());
    expect(drawsA).toEqual(Array.from({ length: 5_000 }, () => b.next()));
  });
});
