// The replay's own report sections (reports/replay.ts): where the CPU went, and each process's waits
// for a core beside it when the document measured them.
import { describe, expect, it } from 'vitest';
import { replaySections } from '../../reports/replay.js';
import { savedReplay } from '../sim/compare/documents.js';

const cpuRows = (r: ReturnType<typeof savedReplay>) => replaySections(r).find((s) => s.title.startsWith('Replay: where the CPU went'))!.rows;

describe('the replay report', () => {
  it("shows each process's mean wait for a core and its waits over its CPU time", () => {
    const r = savedReplay(0);
    r.replay!.cpu.share!.coreWaits = { server: { runSeconds: 4, waitSeconds: 1.6, slices: 20_000 }, redis: { runSeconds: 1, waitSeconds: 0.3, slices: 0 } };
    // a process never put on a core in the window says nothing
    expect(cpuRows(r)).toContainEqual(['waits for a core', 'each time put on a core, mean: server 80 us (0.40 of its CPU time)']);
  });

  it('has no such row from a document that did not measure it', () => {
    expect(cpuRows(savedReplay(0)).map(([k]) => k)).not.toContain('waits for a core');
  });
});
