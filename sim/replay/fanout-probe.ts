// Fan-out lag measured from outside the workers: for a sample of acknowledged posts, a sample of
// their followers' timelines (always including the followers the worker reaches last) is polled in
// Redis until the post is there. The workers' own histograms say when they wrote; this says when a
// reader could see it, through nothing but Redis. The two are reported side by side.
//
// A poll is one pipeline over every pending (post, follower) pair: EXISTS of the timeline and
// ZSCORE of the post in it (for a pulled post, ZSCORE in its author's recent list). A follower whose
// timeline is missing is dropped from the sample (the worker skips missing timelines by design; the
// reader's next read rebuilds it from Postgres, with the post), so only a timeline that exists and
// never gets the post counts as not seen.
//
// When a post appeared is only known to within a poll: between the last poll that did not find it
// (or the post's creation, for the first poll) and the Redis execution of the one that did (the
// midpoint of its pipeline's send and answer). The lag recorded is the middle of that interval, so
// the resolution is half the poll interval plus half a pipeline round trip.
//
// A pulled post is visible to every reader who merges its author's list once it is in that list.
// The API adds it there before answering 201 and says when in the answer (Server-Timing `listed`,
// core/server-timing.ts: on the server's sub-millisecond clock, from just before it stamps the post's
// id, within a millisecond of its createdAt), so a pulled post found at its first poll takes that
// lag; from a server that does not say, it appeared no later than the 201 arrived, and its interval
// ends there. One key stands for its whole live audience,
// and its lag is recorded with that audience as the weight (pulledFollowerLag), so that pushed and
// pulled deliveries add up per follower as the simulator counts them; pulledPostLag has it once per post.
import type { Redis } from 'ioredis';
import { authorPostsKey, timelineKey } from '../../core/keys.js';
import { DurationRecorder } from '../metrics/recorder.js';

export interface ProbeOptions {
  redis: Redis;
  /** The server's key prefix. */
  keyPrefix: string;
  pollMs: number;
  /** A pair not seen this long after its post's creation is given up (counted as not seen). */
  giveUpMs: number;
  /** At most this many pairs pending at once; posts beyond it are not probed (counted). */
  maxPending: number;
  /** Series bucket of the per-interval lag p99 (wall ms), and the run's start (ms since epoch). */
  intervalMs: number;
  startedAtMs: number;
  clock?: () => number;
}

interface Pair {
  post: string;
  key: string;
  /** Creation time of the post (ms since epoch, from its id) and its series bucket. */
  createdAt: number;
  bucket: number;
  probe: number;
  /** Followers the pair stands for: 1 for a timeline, the live audience for a pulled post's list. */
  weight: number;
  /** When the post was last polled and not there (ms since epoch); -1 before the first poll. */
  lastMiss: number;
  /** No later than this it was there if the first poll finds it (a pulled post: its 201's arrival); Infinity: unknown. */
  firstBound: number;
  /** A pulled post: the server's own ms from its creation to its author's list holding it (NaN: not said). */
  listedAfterMs: number;
}

interface WatchedPost {
  pending: number;
  lastSeenMs: number;
  bucket: number;
  createdAt: number;
}

export interface ProbeFigures {
  posts: number;
  pairs: number;
  /** Per probed follower of a pushed post, seconds. */
  followerLag: ReturnType<DurationRecorder['summary']>;
  /** Pulled posts: the list write's lag, each weighted by the post's live audience, seconds. */
  pulledFollowerLag: ReturnType<DurationRecorder['summary']>;
  /** Pulled posts: the same lag, once per post. */
  pulledPostLag: ReturnType<DurationRecorder['summary']>;
  pulledPosts: number;
  /** Pulled posts whose lag is the server's own Server-Timing (found at their first poll, the server saying when); absent from older documents. */
  pulledTimed?: number;
  /** Per probed post (its last probed follower), seconds. */
  postLag: ReturnType<DurationRecorder['summary']>;
  /** Followers dropped because their timeline was missing (rebuilt on their next read). */
  missingTimelines: number;
  /** Pairs never seen within giveUpMs: a post acknowledged and not delivered. */
  notSeen: number;
  /** Posts not probed because maxPending pairs were in flight. */
  skippedPosts: number;
  polls: number;
  pollMs: number;
  /** Share of ordinary posts the caller chose to probe (it probes every pulled and burst post); set by the caller. */
  share?: number;
  /** Per series bucket of creation: probed follower lag p99, seconds (NaN: nothing probed). */
  lagP99ByBucket: number[];
  histogram: string;
  /** HDR (µs) of pulledFollowerLag, weighted: mergeable with the workers' pushed per-follower histogram. */
  pulledHistogram: string;
  /** HDR (µs) of pulledPostLag: mergeable with the workers' pushed per-post histogram. */
  pulledPostHistogram: string;
}

export class FanoutProbe {
  private readonly pairs: Pair[] = [];
  private readonly posts: WatchedPost[] = [];
  private readonly followerLag = new DurationRecorder();
  private readonly postLag = new DurationRecorder();
  private readonly pulledLag = new DurationRecorder();
  private readonly pulledPostLag = new DurationRecorder();
  private pulledPosts = 0;
  private pulledTimed = 0;
  private readonly byBucket = new Map<number, DurationRecorder>();
  /** Follower lags seen since the live view last asked (takeRecentP99). */
  private recent = new DurationRecorder();
  private timer: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;
  private pairCount = 0;
  private missing = 0;
  private notSeen = 0;
  private skipped = 0;
  private polls = 0;
  private readonly clock: () => number;

  constructor(private readonly o: ProbeOptions) {
    this.clock = o.clock ?? Date.now;
  }

  start(): void {
    const tick = () => {
      this.polling = this.poll().finally(() => {
        this.polling = null;
        if (this.timer !== null) this.timer = setTimeout(tick, this.o.pollMs);
      });
    };
    this.timer = setTimeout(tick, this.o.pollMs);
  }

  /**
   * Watch a post: created at `createdAt` (ms), by `author`; `followers` are the probed readers (an
   * empty list for a pulled post, watched in its author's list instead, standing for `audience` readers,
   * and in it by `answeredAt`, when its 201 arrived, `listedAfterMs` after its creation when the
   * server said so).
   */
  watch(postId: string, createdAt: number, author: number, followers: readonly number[], pulled: boolean, audience = 1, answeredAt = Infinity, listedAfterMs = NaN): void {
    const keys = pulled ? [this.o.keyPrefix + authorPostsKey(author)] : followers.map((u) => this.o.keyPrefix + timelineKey(u));
    const weight = pulled ? Math.max(1, audience) : 1;
    if (keys.length === 0) return;
    if (this.pairs.length + keys.length > this.o.maxPending) {
      this.skipped++;
      return;
    }
    const probe = this.posts.length;
    const bucket = Math.floor((createdAt - this.o.startedAtMs) / this.o.intervalMs);
    this.posts.push({ pending: keys.length, lastSeenMs: -Infinity, bucket, createdAt });
    const firstBound = pulled ? answeredAt : Infinity;
    const listed = pulled ? listedAfterMs : NaN;
    for (const key of keys) this.pairs.push({ post: postId, key, createdAt, bucket, probe, weight, lastMiss: -1, firstBound, listedAfterMs: listed });
    this.pairCount += keys.length;
    if (pulled) this.pulledPosts++;
  }

  /** p99 of the follower lags seen since the last call, seconds (NaN: none): the live view's lag line. */
  takeRecentP99(): number {
    const r = this.recent;
    this.recent = new DurationRecorder();
    return r.count > 0 ? r.percentile(99) : NaN;
  }

  /** p99 of every follower lag seen so far, seconds (NaN: none). */
  get followerP99SoFar(): number {
    return this.followerLag.count > 0 ? this.followerLag.percentile(99) : NaN;
  }

  /** Pairs still waiting. */
  get pending(): number {
    return this.pairs.length;
  }

  /** Poll until nothing is pending (or everything gave up), then stop. */
  async finish(): Promise<ProbeFigures> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.polling) await this.polling;
    while (this.pairs.length > 0) {
      await this.poll();
      if (this.pairs.length > 0) await new Promise((r) => setTimeout(r, this.o.pollMs));
    }
    const buckets = Math.max(0, ...this.byBucket.keys()) + 1;
    return {
      posts: this.posts.length,
      pairs: this.pairCount,
      followerLag: this.followerLag.summary(),
      pulledFollowerLag: this.pulledLag.summary(),
      pulledPostLag: this.pulledPostLag.summary(),
      pulledPosts: this.pulledPosts,
      pulledTimed: this.pulledTimed,
      postLag: this.postLag.summary(),
      missingTimelines: this.missing,
      notSeen: this.notSeen,
      skippedPosts: this.skipped,
      polls: this.polls,
      pollMs: this.o.pollMs,
      lagP99ByBucket: Array.from({ length: this.byBucket.size === 0 ? 0 : buckets }, (_, b) => this.byBucket.get(b)?.percentile(99) ?? NaN),
      histogram: this.followerLag.encoded(),
      pulledHistogram: this.pulledLag.encoded(),
      pulledPostHistogram: this.pulledPostLag.encoded(),
    };
  }

  /** Abandon whatever is pending (an interrupted run): counted neither seen nor lost. */
  abandon(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.pairs.length = 0;
  }

  private async poll(): Promise<void> {
    if (this.pairs.length === 0) return;
    const batch = this.pairs.splice(0, this.pairs.length);
    const p = this.o.redis.pipeline();
    for (const pair of batch) {
      p.exists(pair.key);
      p.zscore(pair.key, pair.post);
    }
    let replies: [Error | null, unknown][];
    const sent = this.clock();
    try {
      replies = ((await p.exec()) ?? []) as [Error | null, unknown][];
    } catch {
      this.pairs.push(...batch); // Redis hiccup: try again at the next poll
      return;
    }
    this.polls++;
    // when Redis ran it, to within half the round trip
    const now = (sent + this.clock()) / 2;
    for (let i = 0; i < batch.length; i++) {
      const pair = batch[i];
      const [e1, exists] = replies[2 * i] ?? [new Error('no reply'), null];
      const [e2, score] = replies[2 * i + 1] ?? [new Error('no reply'), null];
      const post = this.posts[pair.probe];
      if (e1 || e2) {
        this.pairs.push(pair);
        continue;
      }
      if (score !== null) {
        const from = pair.lastMiss < 0 ? pair.createdAt : pair.lastMiss;
        const to = pair.lastMiss < 0 ? Math.min(now, pair.firstBound) : now;
        const said = pair.lastMiss < 0 && Number.isFinite(pair.listedAfterMs);
        const lag = said ? pair.listedAfterMs / 1000 : Math.max(0, (from + to) / 2 - pair.createdAt) / 1000;
        if (said) this.pulledTimed++;
        if (pair.weight === 1) this.followerLag.record(lag);
        else {
          this.pulledLag.record(lag, pair.weight);
          this.pulledPostLag.record(lag);
        }
        this.recent.record(lag, pair.weight);
        let rec = this.byBucket.get(pair.bucket);
        if (!rec) this.byBucket.set(pair.bucket, (rec = new DurationRecorder()));
        rec.record(lag, pair.weight);
        post.lastSeenMs = Math.max(post.lastSeenMs, said ? pair.createdAt + pair.listedAfterMs : (from + to) / 2);
        this.settle(post);
      } else if (exists === 0) {
        this.missing++;
        this.settle(post);
      } else if (now - pair.createdAt > this.o.giveUpMs) {
        this.notSeen++;
        this.settle(post);
      } else {
        pair.lastMiss = now;
        this.pairs.push(pair);
      }
    }
  }

  private settle(post: WatchedPost): void {
    if (--post.pending > 0) return;
    if (Number.isFinite(post.lastSeenMs)) this.postLag.record(Math.max(0, post.lastSeenMs - post.createdAt) / 1000);
  }
}
