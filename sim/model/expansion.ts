// The worker's time on a post event before its writes: its statement (the author's follower count),
// then for a push the first page of followers, sent beside the author's list add and the
// pulled-mark lookup (a round trip at least). On the documents' fleet the event holds its partition
// for this long; later pages are read while the first ones are written.
import type { Costs } from '../scenario/types.js';

// `statements`: this event's draw of costs.eventStatements (the fluid load takes its mean).
export function expansionSeconds(costs: Costs, statements: number, firstPageFollowers: number, pulled: boolean): number {
  return statements + (pulled ? 0 : firstPageSeconds(costs, firstPageFollowers));
}

/** The first page of followers with the list add beside it: a round trip at least. */
export function firstPageSeconds(costs: Costs, followers: number): number {
  return Math.max(costs.rtt, costs.expand + costs.expandPerFollower * followers);
}
