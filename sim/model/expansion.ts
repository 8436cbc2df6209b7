// The worker's time on a post event before its writes: its statements (the author's follower count,
// then the list add and the pulled-mark lookup), and for a push the first page of followers, sent
// beside that list add. On the documents' fleet the event holds its partition for this long; later
// pages are read while the first ones are written.
import type { Costs } from '../scenario/types.js';

// `statements`: this event's draw of costs.eventStatements (the fluid load takes its mean).
export function expansionSeconds(costs: Costs, statements: number, firstPageFollowers: number, pulled: boolean): number {
  return statements + (pulled ? 0 : firstPageSeconds(costs, firstPageFollowers));
}

/**
 * The wait for the first page of followers beyond the statements: the worker sends it right after
 * the follower count, beside the list add and the pulled-mark lookup (a round trip, part of the
 * statements), so only what the page takes beyond that round trip is added.
 */
export function firstPageSeconds(costs: Costs, followers: number): number {
  return Math.max(0, costs.expand + costs.expandPerFollower * followers - costs.rtt);
}
