// The worker's time on a post event before its writes: the author's follower count (one Postgres
// statement), then for a push the first page of followers read beside the author's list write (a
// round trip). A pulled post's list write is its fan-out and is charged there. The event holds its
// partition for this long; later pages are read while the first ones are written.
import type { Costs } from '../scenario/types.js';

export function expansionSeconds(costs: Costs, firstPageFollowers: number, pulled: boolean): number {
  return costs.eventStatements + (pulled ? 0 : Math.max(costs.rtt, costs.expand + costs.expandPerFollower * firstPageFollowers));
}
