// Population scaling's smooth loads. A post by an ordinary sampled account stands for s posts by s
// accounts like it, spread over time: one goes through the fleet as a probe that measures lag, the
// other s - 1 arrive as a fluid at the expected rate of their writes. Reads load the Redis shards
// the same way: spread over every shard for ordinary keys, on their own shard for the lists of
// named accounts (the hot keys). Everything here is per second at a rate-profile factor of 1.
import { COMMANDS_PER_LIST, commandsPerPage, LISTS_PER_PAGE_BESIDES_PULLED } from '../../core/read-plan.js';
import { isDormant } from '../../core/timeline-rules.js';
import type { FanoutPolicy } from '../../core/fanout-policy.js';
import type { Costs } from '../scenario/types.js';
import type { Population } from './population.js';
import type { PullIndex } from './pull-index.js';
import { expansionSeconds } from './expansion.js';
import { fullListReadSeconds } from './list-reads.js';
import { quantileMean } from '../scenario/quantiles.js';

export interface FluidInputs {
  population: Population;
  policy: FanoutPolicy;
  costs: Costs;
  pageSize: number;
  shards: number;
  partitions: number;
  dormantDays: number;
  /** Real users each sampled user stands for. */
  weight: Float64Array;
  follows: Uint32Array;
  /** Readers' pulled authors under the rate rule (per pair); unused by author-level policies. */
  pulls: PullIndex;
  pairPulled: (author: number, reader: number) => boolean;
  /** Followers read per page while expanding a post. */
  followerPage: number;
  /** Is this author pulled at the start (its posts expand no follower page)? */
  authorPulledAtStart: (author: number) => boolean;
  /** Does this author fan out on the large-post pool? */
  isLarge: (author: number) => boolean;
}

export class FluidLoad {
  /** Timeline writes per second arriving at the ordinary [0] and large-post [1] pools. */
  readonly fanout = [0, 0];
  /** Seconds of expansion work per second on each event-log partition. */
  readonly partitionRate: number;
  /** Redis seconds of work and commands per second spread over every shard. */
  readSpread = 0;
  readOps = 0;
  /** Redis seconds of work and commands per second on one shard: the lists of named accounts. */
  readonly readShard: Float64Array;
  readonly readShardOps: Float64Array;

  /** Writes of one real post per ordinary author when pushed; fixed for the run. */
  private readonly pushWrites: Float64Array;
  /** Pages per second of the readers who would fetch each author's list were it pulled. */
  private readonly listReaders: Float64Array;
  private pagesPerSecond = 0;

  constructor(private readonly f: FluidInputs) {
    const pop = f.population;
    const g = pop.graph;
    const n = pop.users;
    const s = pop.scale;
    const rate = f.policy.kind === 'rate';
    this.readShard = new Float64Array(f.shards);
    this.readShardOps = new Float64Array(f.shards);
    this.pushWrites = new Float64Array(n);
    this.listReaders = new Float64Array(n);
    // seconds of partition time per second: each ordinary post's expansion at its own follower count
    let expansionRate = 0;
    const statementsMean = quantileMean(f.costs.eventStatements);
    for (let a = 0; a < n; a++) {
      if (pop.individual[a] || pop.postRate[a] === 0) continue;
      const followers = Math.min(g.followerOffsets[a + 1] - g.followerOffsets[a], f.followerPage);
      expansionRate += pop.postRate[a] * expansionSeconds(f.costs, statementsMean, followers, !rate && f.authorPulledAtStart(a));
    }
    this.partitionRate = s > 1 ? (expansionRate * (s - 1)) / f.partitions : 0;
    if (s <= 1) return;

    const readerCapped = f.policy.kind === 'reader-cap';
    for (let a = 0; a < n; a++) {
      if (pop.individual[a] || pop.postRate[a] === 0) continue;
      let w = 0;
      let pulledPair = false;
      for (let e = g.followerOffsets[a]; e < g.followerOffsets[a + 1]; e++) {
        const u = g.followerIds[e];
        if (rate && f.pairPulled(a, u)) {
          pulledPair = true;
          continue;
        }
        if (f.policy.skipDormant && isDormant(pop.lastSeen[u], 0, f.dormantDays)) continue;
        w += readerCapped && f.follows[u] > f.policy.readerCap ? f.policy.readerCap / f.follows[u] : 1;
      }
      this.pushWrites[a] = w + (pulledPair ? 1 : 0);
    }

    for (let i = 0; i < pop.activeUsers.length; i++) {
      const u = pop.activeUsers[i];
      const pages = pop.readRate[u] * f.weight[u];
      this.pagesPerSecond += pages;
      if (rate) for (let k = f.pulls.offsets[u]; k < f.pulls.offsets[u + 1]; k++) this.listReaders[f.pulls.authors[k]] += pages;
      else for (let e = g.followeeOffsets[u]; e < g.followeeOffsets[u + 1]; e++) this.listReaders[g.followeeIds[e]] += pages;
    }
  }

  /** Re-sum the loads for the authors pulled now (an adaptive threshold moves them). */
  recompute(authorPulled: (author: number) => boolean): void {
    const f = this.f;
    const pop = f.population;
    const s = pop.scale;
    this.fanout[0] = 0;
    this.fanout[1] = 0;
    this.readShard.fill(0);
    this.readShardOps.fill(0);
    this.readSpread = 0;
    this.readOps = 0;
    if (s <= 1) return;
    const rate = f.policy.kind === 'rate';
    for (let a = 0; a < pop.users; a++) {
      if (pop.individual[a] || pop.postRate[a] === 0) continue;
      const w = !rate && authorPulled(a) ? 1 : this.pushWrites[a];
      this.fanout[f.isLarge(a) ? 1 : 0] += pop.postRate[a] * (s - 1) * w;
    }
    // every page reads the timeline and the reader's own list, and hydrates its bodies; each list
    // read charged a full slice (list-reads.ts)
    const listRead = fullListReadSeconds(f.costs, f.pageSize);
    this.readSpread = this.pagesPerSecond * (listRead * LISTS_PER_PAGE_BESIDES_PULLED + f.costs.mgetPerKey * f.pageSize);
    this.readOps = this.pagesPerSecond * commandsPerPage(0);
    for (let a = 0; a < pop.users; a++) {
      const readers = this.listReaders[a];
      if (readers === 0 || (!rate && !authorPulled(a))) continue;
      if (pop.individual[a]) {
        this.readShard[pop.shard[a]] += readers * listRead;
        this.readShardOps[pop.shard[a]] += readers * COMMANDS_PER_LIST;
      } else {
        this.readSpread += readers * listRead;
        this.readOps += readers * COMMANDS_PER_LIST;
      }
    }
  }
}
