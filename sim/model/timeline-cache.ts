// The timeline cache as the simulator sees it: per user, whether a timeline exists, its length,
// when it was last rebuilt and when its lease runs out; per author, the recent-post list that pull
// reads. Memory follows the measured Redis encoding model, weighted by how many real users each
// sampled one stands for, in total and per shard.
import { lengthAfterPush } from '../../core/timeline-rules.js';
import { authorPostsKey, timelineKey } from '../../core/keys.js';
import { authorListInstanceBytes, authorListUsageBytes, KEYSPACE_BYTES_PER_KEY, timelineBytesTable, timelineNaiveBytes, zsetUsageBytes } from '../../core/redis-memory.js';

export class TimelineCache {
  readonly length: Uint16Array;
  readonly exists: Uint8Array;
  /** Posts created at or before this time are already in the timeline (it was rebuilt then). */
  readonly builtAt: Float64Array;
  readonly expiresAt: Float64Array;
  readonly listLength: Uint16Array;
  readonly listExists: Uint8Array;
  /**
   * Each user's own recent list (the server keeps one for every reader, rebuilt on a read that
   * misses it, and adds the user's posts to it): counted in usageBytes only, not in `bytes`.
   */
  readonly ownLength: Uint16Array;
  readonly ownExists: Uint8Array;

  /** Bytes as INFO used_memory would count them, and the documents' 24 B/entry figure. */
  bytes = 0;
  naiveBytes = 0;
  listBytes = 0;
  peakBytes = 0;
  /** Bytes of keys that live on one shard. */
  private readonly exactShardBytes: Float64Array;
  /** Bytes of keys standing for many users spread over every shard (population scaling). */
  private spreadBytes = 0;
  timelines = 0;

  private readonly table: Float64Array;
  private readonly listTable: Float64Array;

  constructor(
    users: number,
    readonly cap: number,
    readonly listCap: number,
    readonly leaseSeconds: number,
    private readonly weight: Float64Array,
    private readonly shard: Uint16Array,
    private readonly shards: number,
    /** Keys of sampled users standing for more than one real user are spread over every shard. */
    private readonly spread: boolean,
  ) {
    this.length = new Uint16Array(users);
    this.exists = new Uint8Array(users);
    this.builtAt = new Float64Array(users);
    this.expiresAt = new Float64Array(users);
    this.listLength = new Uint16Array(users);
    this.listExists = new Uint8Array(users);
    this.ownLength = new Uint16Array(users);
    this.ownExists = new Uint8Array(users);
    this.exactShardBytes = new Float64Array(shards);
    this.table = timelineBytesTable(cap);
    this.listTable = new Float64Array(listCap + 1);
    for (let i = 0; i <= listCap; i++) this.listTable[i] = authorListInstanceBytes(i);
  }

  /** Bytes of a timeline key; an existing empty timeline keeps a one-entry sentinel so it is not rebuilt again. */
  private timelineKeyBytes(u: number): number {
    return this.exists[u] ? this.table[Math.max(1, this.length[u])] : 0;
  }

  private account(u: number, deltaBytes: number, deltaNaive: number): void {
    const w = this.weight[u];
    this.bytes += deltaBytes * w;
    this.naiveBytes += deltaNaive * w;
    this.book(u, deltaBytes * w);
    if (this.bytes > this.peakBytes) this.peakBytes = this.bytes;
  }

  private book(u: number, bytes: number): void {
    if (this.spread && this.weight[u] > 1) this.spreadBytes += bytes;
    else this.exactShardBytes[this.shard[u]] += bytes;
  }

  /** Bytes held by one shard. */
  shardBytes(i: number): number {
    return this.exactShardBytes[i] + this.spreadBytes / this.shards;
  }

  /** Create (or rebuild) a timeline with `entries` posts, all created up to `now`. */
  build(u: number, entries: number, now: number): void {
    const before = this.timelineKeyBytes(u);
    const beforeNaive = timelineNaiveBytes(this.exists[u] ? this.length[u] : 0);
    if (!this.exists[u]) this.timelines += this.weight[u];
    this.exists[u] = 1;
    this.length[u] = Math.min(this.cap, Math.max(0, Math.round(entries)));
    this.builtAt[u] = now;
    this.expiresAt[u] = now + this.leaseSeconds;
    this.account(u, this.timelineKeyBytes(u) - before, timelineNaiveBytes(this.length[u]) - beforeNaive);
  }

  /**
   * Push one post (created at `created`) into u's timeline at time `now`. Only an existing timeline
   * takes it: writing into a missing one would create a partial feed that hides the rebuild.
   * Returns whether the timeline changed.
   */
  push(u: number, created: number, now: number): boolean {
    if (!this.exists[u] || created <= this.builtAt[u]) return false;
    const old = this.length[u];
    const next = lengthAfterPush(old, this.cap);
    this.expiresAt[u] = now + this.leaseSeconds;
    if (next === old) return true;
    this.length[u] = next;
    this.account(u, this.table[next] - this.table[Math.max(1, old)], timelineNaiveBytes(next) - timelineNaiveBytes(old));
    return true;
  }

  /** A read renews the lease. */
  touch(u: number, now: number): void {
    this.expiresAt[u] = now + this.leaseSeconds;
  }

  /** Is the timeline there for a read at `now`? An expired one is dropped first. */
  present(u: number, now: number): boolean {
    if (this.exists[u] && this.expiresAt[u] <= now) this.drop(u);
    return this.exists[u] === 1;
  }

  drop(u: number): void {
    if (!this.exists[u]) return;
    this.account(u, -this.timelineKeyBytes(u), -timelineNaiveBytes(this.length[u]));
    this.exists[u] = 0;
    this.length[u] = 0;
    this.timelines -= this.weight[u];
  }

  /** Drop every timeline whose lease ran out; returns how many sampled timelines went. */
  sweepExpired(now: number): number {
    let n = 0;
    for (let u = 0; u < this.exists.length; u++) {
      if (this.exists[u] && this.expiresAt[u] <= now) {
        this.drop(u);
        n++;
      }
    }
    return n;
  }

  buildList(a: number, entries: number): void {
    this.dropList(a);
    this.listExists[a] = 1;
    this.listLength[a] = Math.min(this.listCap, Math.max(0, Math.round(entries)));
    this.accountList(a, this.listTable[Math.max(1, this.listLength[a])]);
  }

  pushList(a: number): void {
    if (!this.listExists[a]) {
      this.buildList(a, 1);
      return;
    }
    const old = this.listLength[a];
    if (old >= this.listCap) return;
    this.listLength[a] = old + 1;
    this.accountList(a, this.listTable[old + 1] - this.listTable[Math.max(1, old)]);
  }

  dropList(a: number): void {
    if (!this.listExists[a]) return;
    this.accountList(a, -this.listTable[Math.max(1, this.listLength[a])]);
    this.listExists[a] = 0;
    this.listLength[a] = 0;
  }

  private accountList(a: number, delta: number): void {
    const w = this.weight[a];
    this.bytes += delta * w;
    this.listBytes += delta * w;
    this.book(a, delta * w);
    if (this.bytes > this.peakBytes) this.peakBytes = this.bytes;
  }

  /**
   * The keys as a replay counts them: MEMORY USAGE of each timeline and list under its own key name
   * (user u's keys, as core/keys.ts names them), plus its keyspace entry (`bytes` is what INFO
   * used_memory adds, for 9-digit ids, allocator overhead of skiplists included). `keyPrefix` is
   * the key space the server wrote under (a replay's scratch one): its length is part of each key's
   * MEMORY USAGE, a sixth of a one-entry timeline's.
   */
  usageBytes(keyPrefix = ''): { timelines: number; lists: number; ownLists: number } {
    let timelines = 0;
    let lists = 0;
    let ownLists = 0;
    for (let u = 0; u < this.exists.length; u++) {
      const w = this.weight[u];
      if (!this.exists[u] && !this.listExists[u] && !this.ownExists[u]) continue;
      const listKey = keyPrefix.length + authorPostsKey(u).length;
      if (this.exists[u]) timelines += w * (zsetUsageBytes(Math.max(1, this.length[u]), keyPrefix.length + timelineKey(u).length) + KEYSPACE_BYTES_PER_KEY);
      // a reader's own list and their list as a pulled author are one key (a replay counts it as pulled)
      if (this.listExists[u]) lists += w * (authorListUsageBytes(Math.max(1, this.listLength[u], this.ownLength[u]), listKey) + KEYSPACE_BYTES_PER_KEY);
      else if (this.ownExists[u]) ownLists += w * (authorListUsageBytes(Math.max(1, this.ownLength[u]), listKey) + KEYSPACE_BYTES_PER_KEY);
    }
    return { timelines, lists, ownLists };
  }

  /** u's own list, made (from u's posts of the lease window) if missing: a read merges it. */
  ensureOwn(u: number, entries: number): void {
    if (this.ownExists[u]) return;
    this.ownExists[u] = 1;
    this.ownLength[u] = Math.min(this.listCap, Math.max(0, Math.round(entries)));
  }

  /** u posted: an existing own list takes the post (a missing one is made whole on the next read). */
  pushOwn(u: number): void {
    if (this.ownExists[u] && this.ownLength[u] < this.listCap) this.ownLength[u]++;
  }

  /** Lose every key on the given shards (a shard failed over empty). */
  loseShards(isLost: (shard: number) => boolean): { timelines: number; lists: number } {
    let timelines = 0;
    let lists = 0;
    for (let u = 0; u < this.exists.length; u++) {
      if (!isLost(this.shard[u])) continue;
      if (this.exists[u]) {
        this.drop(u);
        timelines++;
      }
      if (this.listExists[u]) {
        this.dropList(u);
        lists++;
      }
      this.ownExists[u] = 0;
      this.ownLength[u] = 0;
    }
    return { timelines, lists };
  }
}
