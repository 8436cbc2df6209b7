// The follower graph as compressed sparse rows in both directions.
// An edge u -> v means "u follows v": v's followers are the readers its posts fan out to.

export interface FollowerGraph {
  /** Number of accounts; ids are 0 .. users-1. */
  readonly users: number;
  /** Number of follow edges (no self-loops, no duplicates). */
  readonly edges: number;
  /** Followers of account a: followerIds[followerOffsets[a] .. followerOffsets[a + 1]). Length users + 1. */
  readonly followerOffsets: Uint32Array;
  readonly followerIds: Uint32Array;
  /** Accounts that user u follows: followeeIds[followeeOffsets[u] .. followeeOffsets[u + 1]). Length users + 1. */
  readonly followeeOffsets: Uint32Array;
  readonly followeeIds: Uint32Array;
  /** Named accounts (celebrities added by the generator), by id. */
  readonly names: ReadonlyMap<number, string>;
  /** For imported graphs: the id each account had in the source file. */
  readonly sourceIds?: Float64Array;
  /** How the graph was made: generator parameters or the source file. */
  readonly provenance: Readonly<Record<string, string | number>>;
}

export function followerCount(g: FollowerGraph, account: number): number {
  return g.followerOffsets[account + 1] - g.followerOffsets[account];
}

export function followeeCount(g: FollowerGraph, user: number): number {
  return g.followeeOffsets[user + 1] - g.followeeOffsets[user];
}
