// The read path of the model: a home-feed page goes through the API tier (network hop, a core,
// its CPU), then two Redis round trips (core/read-plan.ts): the pipeline of every merged list (the
// timeline, the reader's own list, each pulled author's list) with the follows token, each list on
// its shard, waiting behind that shard's load; then the MGET of the page's bodies. A missing
// timeline or list is rebuilt from Postgres first (cold start), queued on the rebuild connections.
import { commandsPerPage, firstSlice, listsPerPage, ROUND_TRIPS_PER_PAGE } from '../../core/read-plan.js';
import { mix32, Rng } from '../../core/random.js';
import type { ApiStage } from './api-tier.js';
import { EV, minuteOf, type ModelContext } from './context.js';
import { listReadSeconds } from './list-reads.js';
import { WorkerPool } from './worker-pool.js';

export class ReadStage {
  /** Rebuilds queue on Postgres connections, one rebuild at a time each. */
  readonly postgres: WorkerPool;
  private readonly waitRng: Rng;
  private readonly shardStamp: Int32Array;
  /** Sessions with pages still to read: the reader and how many pages are left, by slot. */
  private readonly sessions = new OpenSessions();

  constructor(
    private readonly ctx: ModelContext,
    private readonly api: ApiStage,
  ) {
    const infra = ctx.sc.infrastructure;
    this.postgres = new WorkerPool(infra.postgresConnections, 1 / infra.costs.rebuild, 0, Infinity, ctx.duration);
    this.waitRng = Rng.derive(ctx.sc.seed, 'waits');
    this.shardStamp = new Int32Array(ctx.shardLoad.processes).fill(-1);
  }

  private rebuild(now: number, w: number): number {
    // at scale a cold read stands for w rebuilds at once: this one waits behind half of the others
    this.postgres.addLump(now, (w - 1) / 2);
    const done = this.postgres.submit(now, 1);
    this.postgres.addLump(now, (w - 1) / 2);
    this.ctx.count.rebuilds += w;
    return done - now;
  }

  /** The shard a list is read from: a named author's own, or (at scale) spread like its readers. */
  private listShard(f: number, u: number): number {
    const ctx = this.ctx;
    return ctx.spread && !ctx.pop.individual[f] ? mix32(f ^ Math.imul(u, 0x9e3779b1)) % ctx.shards : ctx.pop.shard[f];
  }

  /**
   * Pages u's feed holds: its timeline, its own recent posts and its pulled authors' lists, a page
   * size each. A session ends at the last one (the server's nextCursor is null there).
   */
  feedPages(u: number): number {
    const ctx = this.ctx;
    const { cache, pop } = ctx;
    let entries = cache.length[u] + Math.min(cache.listCap, Math.round(pop.postRate[u] * ctx.leaseSeconds));
    for (let k = ctx.pulledOf[u]; k < ctx.pulledOf[u + 1]; k++) {
      const f = ctx.pulledIds[k];
      if (!ctx.adaptive || ctx.authorPulled(f)) entries += cache.listLength[f];
    }
    return Math.max(1, Math.ceil(entries / ctx.sc.activity.pageSize));
  }

  /**
   * A session of up to `pages` pages by u starting at `now`: its first page now, then each next
   * page when the one before has been answered (a reader scrolls, as replay's driver sends them),
   * ending early at the end of the feed.
   */
  session(u: number, now: number, pages: number): void {
    const latency = this.page(u, now, true);
    const left = Math.min(pages, this.feedPages(u)) - 1;
    if (left > 0) this.ctx.q.push(now + latency, EV.PAGE, this.sessions.add(u, left));
  }

  /** The next page of session `slot` (EV.PAGE), at `now`. */
  nextPage(slot: number, now: number): void {
    const s = this.sessions;
    const u = s.user[slot];
    const latency = this.page(u, now);
    if (--s.left[slot] > 0) this.ctx.q.push(now + latency, EV.PAGE, slot);
    else s.release(slot);
  }

  /** One page read by u at `now` (the first of its session, or a later one); returns its latency. */
  page(u: number, now: number, first = false): number {
    const ctx = this.ctx;
    const { cache, shardLoad, pop, count, series } = ctx;
    const costs = ctx.sc.infrastructure.costs;
    const pageSize = ctx.sc.activity.pageSize;
    const w = ctx.weight[u];
    const seq = count.readSeq++;
    ctx.lastSeen[u] = now;
    let latency = 0;
    let ops = 0;
    let cold = false;
    const rng = this.waitRng;
    const home = ctx.spread && w > 1 ? rng.int(ctx.shards) : pop.shard[u];
    if (!cache.present(u, now)) {
      cold = true;
      const entries = Math.min(ctx.sc.policy.timelineCap, Math.round(ctx.pushedRate(u) * ctx.leaseSeconds));
      cache.build(u, entries, now);
      count.rebuildEntries += entries * w;
      latency += this.rebuild(now, w) + costs.rtt + costs.zadd * entries;
      ops += 1;
      if (ctx.spread && w > 1) shardLoad.addSpread(costs.zadd * entries * w, w);
      else shardLoad.add(home, costs.zadd * entries * w, w);
    }
    // round trip 1: the timeline, the reader's own list and every pulled author's list, pipelined;
    // each read returns its list's first slice, or what the list holds
    const slice = firstSlice(pageSize);
    const ownEntries = Math.min(cache.length[u], slice) + Math.min(cache.ownLength[u], slice);
    let entries = ownEntries;
    let maxWait = shardLoad.wait(home, rng);
    this.shardStamp[shardLoad.processOf(home)] = seq;
    if (!ctx.spread) shardLoad.add(home, listReadSeconds(costs, 2, ownEntries) * w, 2 * w);
    let pulled = 0;
    let listWait = 0;
    for (let k = ctx.pulledOf[u]; k < ctx.pulledOf[u + 1]; k++) {
      const f = ctx.pulledIds[k];
      if (ctx.adaptive && !ctx.authorPulled(f)) continue;
      pulled++;
      const sh = this.listShard(f, u);
      // one pipeline a process: its lists wait once there
      const process = shardLoad.processOf(sh);
      if (this.shardStamp[process] !== seq) {
        this.shardStamp[process] = seq;
        const wt = shardLoad.wait(sh, rng);
        if (wt > maxWait) maxWait = wt;
      }
      if (!cache.listExists[f]) {
        // concurrent reads of a missing list make one rebuild (single-flight)
        listWait = Math.max(listWait, this.rebuild(now, 1));
        count.listRebuilds += 1;
        cache.buildList(f, pop.postRate[f] * ctx.leaseSeconds);
      }
      const e = Math.min(cache.listLength[f], slice);
      entries += e;
      if (!ctx.spread) shardLoad.add(sh, listReadSeconds(costs, 1, e) * w, w);
    }
    const lists = listsPerPage(pulled);
    latency += this.api.serveRead(now, lists, entries, pageSize, w, this.api.drawPageJitter(lists, entries, pageSize));
    latency += costs.rtt + maxWait + listReadSeconds(costs, lists, entries) + listWait;
    // round trip 2: hydrate the page's post bodies
    const bodyShard = rng.int(ctx.shards);
    latency += costs.rtt + shardLoad.wait(bodyShard, rng) + costs.mgetPerKey * pageSize;
    // the handler resumes after each round trip once its event loop is free
    for (let i = 0; i < ROUND_TRIPS_PER_PAGE; i++) latency += this.api.resumeWait(now + latency);
    if (!ctx.spread) shardLoad.addSpread(costs.mgetPerKey * pageSize * w, w);
    ops += commandsPerPage(pulled);
    cache.touch(u, now);
    cache.ensureOwn(u, pop.postRate[u] * ctx.leaseSeconds);

    ctx.readLatency.record(latency, w);
    const minute = minuteOf(ctx, now);
    ctx.readByMinute.record(minute, latency, w);
    series.reads[minute] += w;
    count.readsReal += w;
    count.readOps += ops * w;
    if (first) {
      count.firstPages += w;
      count.firstPageOps += ops * w;
    }
    if (cold) {
      count.coldReads += w;
      series.coldReads[minute] += w;
    }
    return latency;
  }
}

/** Sessions between their pages, one slot each; slots are recycled, nothing is allocated per session. */
class OpenSessions {
  user = new Int32Array(256);
  left = new Int32Array(256);
  private readonly freeSlots: number[] = [];
  private used = 0;

  add(user: number, left: number): number {
    let i: number;
    if (this.freeSlots.length > 0) i = this.freeSlots.pop()!;
    else {
      if (this.used === this.user.length) {
        const grow = (a: Int32Array) => {
          const b = new Int32Array(a.length * 2);
          b.set(a);
          return b;
        };
        this.user = grow(this.user);
        this.left = grow(this.left);
      }
      i = this.used++;
    }
    this.user[i] = user;
    this.left[i] = left;
    return i;
  }

  release(i: number): void {
    this.freeSlots.push(i);
  }
}
