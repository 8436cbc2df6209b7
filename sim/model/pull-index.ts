// For every reader, the followed authors whose posts a home-feed read must fetch and merge
// (their recent-post lists), as compressed rows. Rebuilt when an adaptive threshold moves.
import type { FollowerGraph } from '../graph/graph.js';

export class PullIndex {
  readonly offsets: Uint32Array;
  readonly authors: Uint32Array;

  /** `pulls(author, reader)` says whether a read by `reader` merges `author`'s list. */
  constructor(graph: FollowerGraph, pulls: (author: number, reader: number) => boolean) {
    const n = graph.users;
    const offsets = new Uint32Array(n + 1);
    let total = 0;
    for (let u = 0; u < n; u++) {
      offsets[u] = total;
      for (let e = graph.followeeOffsets[u]; e < graph.followeeOffsets[u + 1]; e++) if (pulls(graph.followeeIds[e], u)) total++;
    }
    offsets[n] = total;
    const authors = new Uint32Array(total);
    let k = 0;
    for (let u = 0; u < n; u++) {
      for (let e = graph.followeeOffsets[u]; e < graph.followeeOffsets[u + 1]; e++) {
        const f = graph.followeeIds[e];
        if (pulls(f, u)) authors[k++] = f;
      }
    }
    this.offsets = offsets;
    this.authors = authors;
  }

  count(u: number): number {
    return this.offsets[u + 1] - this.offsets[u];
  }
}
