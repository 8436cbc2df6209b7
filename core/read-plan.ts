// What one home-feed page asks of Redis in the steady state (server/feed/read-path.ts): one
// pipeline that, for every list merged into the page, renews its lease and reads a slice (PEXPIRE
// + ZREVRANGEBYSCORE), with the reader's follows token (GET) beside them; then one MGET of the
// page's post bodies. The lists are the reader's timeline, the reader's own recent list and the
// recent list of every author pulled for them. The simulator counts a page's commands with this,
// and the replay measures the server's against it.

/** Entries read per list beyond the page size on a page's first read of its lists. */
export const FETCH_SLACK = 5;
/** Largest slice per list per read. */
export const MAX_FETCH = 1_000;

/** Entries a page's first read asks of each list: the page and its slack (a list may hold fewer). */
export function firstSlice(pageSize: number): number {
  return Math.min(pageSize + FETCH_SLACK, MAX_FETCH);
}

/** Lists every page merges besides the pulled authors': the timeline and the reader's own list. */
export const LISTS_PER_PAGE_BESIDES_PULLED = 2;
/** Commands per merged list: the lease renewal and the slice. */
export const COMMANDS_PER_LIST = 2;
/** Redis round trips of a page: the lists with the token, then the bodies. */
export const ROUND_TRIPS_PER_PAGE = 2;

/** Lists merged into a page whose reader pulls `pulled` authors. */
export function listsPerPage(pulled: number): number {
  return LISTS_PER_PAGE_BESIDES_PULLED + pulled;
}

/** Redis commands of one steady-state page whose reader pulls `pulled` authors. */
export function commandsPerPage(pulled: number): number {
  return COMMANDS_PER_LIST * listsPerPage(pulled) + 1 /* GET follows token */ + 1 /* MGET bodies */;
}
