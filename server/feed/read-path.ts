// The home-feed read: the reader's timeline (pushed posts) merged with the recent-post lists of
// the authors they pull and with their own recent list, paged by the (createdAt, id) cursor,
// filtered, refilled and hydrated.
//
// One page, steady state, is two Redis round trips and no Postgres: one pipeline reads a slice of
// every list strictly older than the cursor, renews the leases (readSlices: PEXPIRE +
// ZREVRANGEBYSCORE per list) and reads the reader's follows token (a moved token reloads the
// followee set first, followees.ts), and one MGET hydrates the page's bodies. In between
// core/feed-merge.ts's mergeFeed does the k-way merge with duplicates removed by id.
//
// Filtering and refill. An entry is dropped when its post is deleted (the body cache holds a
// tombstone, or Postgres says so), when no such post exists, or when its author is neither the
// reader nor someone they follow (an entry a fan-out pushed while an unfollow was being applied;
// such an entry is also removed from the timeline once a fresh followee set confirms it). The merge
// runs with a keep filter that drops entries already judged; the entries of a page not yet judged
// are hydrated together, and the merge runs again, taking the next entries in place of the dropped
// ones. When a slice runs out before the page is full (needsMore), the lists are read on from the
// merge's resume position with a larger slice. The page is therefore full whenever the lists hold
// enough live posts, and the cursor never repeats or skips one. A page needing more than
// MAX_ROUNDS reads (thousands of dropped entries in a row) is returned short with a cursor to go
// on from.
//
// The reader's own posts are visible to them at once: their own recent list (the author list the
// fan-out worker keeps for every author whose list exists) is one more merged list, and posting
// adds the new post to it before the 201 (FeedService.createPost). Their own timeline is never
// written for their own posts, and a timeline rebuilt from Postgres (which excludes them) cannot
// lose them.
//
// Cold starts. A missing timeline (a dormant reader back, an expired lease, Redis lost) is rebuilt
// from Postgres through RebuildCoordinator.ensure: the recent posts of the followed authors that
// are pushed, within the lease window, at most the cap. Concurrent reads of it share one rebuild
// (one promise in this process, a Redis lock across processes). A missing recent list is rebuilt
// the same way from the author's newest posts (and their bodies are cached on the way).
//
// Redis down: the read answers from Postgres alone, with the same merge and cursor: the rebuild
// query for the timeline part, the pulled authors' and the reader's own posts by cursor, bodies by
// one query. Nothing in Postgres is lost, the cursors stay valid across the switch, and once Redis
// is back the missing lists are rebuilt on the next reads. Only Postgres down as well is a 503.
// A read that found Redis failing sends the reads of the next CACHE_BACKOFF_MS straight to
// Postgres, so a hung Redis costs one command timeout a second, not one per read.
import type { FeedPosition } from '../../core/cursor.js';
import { mergeFeed, type FeedInput, type FeedSlice } from '../../core/feed-merge.js';
import { authorPostsKey, timelineKey } from '../../core/keys.js';
import { firstSlice, MAX_FETCH } from '../../core/read-plan.js';
import type { PostId } from '../../core/post-id.js';
import type { AuthorPostsCache } from '../cache/author-posts.js';
import type { PostBodyCache } from '../cache/post-bodies.js';
import type { RedisLike } from '../cache/redis-like.js';
import { readSlices, readSlicesAnd, type SliceRequest } from '../cache/post-list.js';
import { PulledAuthorRegistry, PulledAuthorsView } from '../cache/pulled-authors.js';
import type { RebuildCoordinator } from '../cache/single-flight.js';
import type { TimelineCache } from '../cache/timelines.js';
import { MetricsRegistry, type Counter } from '../http/metrics.js';
import type { FeedPage, PageRequest, PostView } from '../http/service.js';
import { BadRequestError, type FeedRepository } from '../store/repository.js';
import { UserActivity } from './activity.js';
import { CacheInconsistentError, cacheReady, isCacheUnavailable } from './faults.js';
import { FolloweeCache, pulledOf, type Followees } from './followees.js';
import { PostHydrator, viewOf, type Verdict } from './hydration.js';

/** Reads of the lists per page at most (each doubles the slice). */
export const MAX_ROUNDS = 8;
/** A page holding posts of authors missing from a followee set at least this old reloads the set. */
export const STRANGER_RELOAD_AFTER_MS = 1_000;
/** After Redis failed a read, reads go straight to Postgres for this long (a hung Redis would
 * otherwise cost every read the command timeout). */
export const CACHE_BACKOFF_MS = 1_000;

export const METRIC_BODY_LOOKUPS = 'feedlab_feed_body_lookups_total';
export const METRIC_COLD_STARTS = 'feedlab_feed_cold_starts_total';
export const METRIC_REBUILDS = 'feedlab_feed_rebuilds_total';
export const METRIC_FALLBACK_READS = 'feedlab_feed_fallback_reads_total';
export const METRIC_REFILLS = 'feedlab_feed_refill_reads_total';
export const METRIC_DROPPED = 'feedlab_feed_dropped_entries_total';
export const METRIC_DORMANT_RETURNS = 'feedlab_feed_dormant_returns_total';
export const METRIC_FOLLOWEE_LOADS = 'feedlab_feed_followee_loads_total';
export const METRIC_STALE_FOLLOWEES = 'feedlab_feed_stale_followee_sets_total';

export interface ReadPathOptions {
  repo: FeedRepository;
  timelines: TimelineCache;
  authorPosts: AuthorPostsCache;
  bodies: PostBodyCache<unknown>;
  rebuilds: RebuildCoordinator;
  /** Followees with more followers than this are pulled (merged at read time), as the worker decides. */
  threshold: number;
  /** The dormancy window, ms (the worker's). */
  dormantMs: number;
  /** The oldest followee set a read uses (default 5 minutes; followees.ts). */
  followeeTtlMs?: number;
  /** How often the copy of the registry of pulled authors is checked (default 1 s). */
  pulledPollMs?: number;
  /** last_seen is written at most this often per reader (default 1 minute). */
  touchEveryMs?: number;
  metrics?: MetricsRegistry;
  clock?: () => number;
  /** Survivable trouble (Redis down, a failed background write), one line, throttled. */
  onWarning?: (line: string) => void;
}

/** Where a page's entries come from: Redis lists, or Postgres when Redis is down. */
interface FeedSource {
  /** Slices of the timeline and the lists, strictly older than `from`, of about `count` entries each. */
  fetch(from: FeedPosition | null, count: number, round: number): Promise<{ timeline: FeedInput<FeedPosition>; lists: FeedInput<FeedPosition>[] }>;
  /** Set a verdict for every one of these entries. */
  judge(entries: readonly FeedPosition[], verdicts: Map<PostId, Verdict>): Promise<void>;
}

interface FolloweeView {
  info: Followees;
  reloaded: boolean;
  /** Slices fetched so far for this page. */
  fetches: number;
  /** `fetches` when the set was reloaded: the reload began after that fetch had returned. */
  reloadedAfterFetch: number;
}

const position = (p: { id: PostId; createdAt: number }): FeedPosition => ({ id: p.id, createdAt: p.createdAt });
const NO_MARKS: Promise<ReadonlySet<number>> = Promise.resolve(new Set());

export class ReadPath {
  readonly redis: RedisLike;
  readonly followees: FolloweeCache;
  readonly pulledAuthors: PulledAuthorsView;
  readonly activity: UserActivity;
  readonly hydrator: PostHydrator;
  readonly threshold: number;
  private readonly clock: () => number;
  private readonly metrics: {
    coldStarts: Counter;
    rebuilds: Counter;
    fallback: Counter;
    refills: Counter;
    dropped: Counter;
  };
  private readonly warnedAt = new Map<string, number>();
  /** Clock ms before which reads skip Redis (set when a read found it unavailable). */
  private cacheDownUntil = 0;

  constructor(private readonly o: ReadPathOptions) {
    this.redis = o.timelines.redis;
    this.clock = o.clock ?? Date.now;
    if (typeof o.threshold !== 'number' || !(o.threshold >= 0)) throw new RangeError(`threshold ${o.threshold} must be a follower count`);
    this.threshold = Math.min(Math.floor(o.threshold), Number.MAX_SAFE_INTEGER);
    const registry = o.metrics ?? new MetricsRegistry();
    this.metrics = {
      coldStarts: registry.counter(METRIC_COLD_STARTS, 'Home-feed reads that found a list missing in Redis (timeline: the reader\'s; recent: an author\'s)', {
        labelNames: ['list'],
      }),
      rebuilds: registry.counter(METRIC_REBUILDS, 'Lists this process rebuilt from Postgres (single-flight: one per missing list)', { labelNames: ['list'] }),
      fallback: registry.counter(METRIC_FALLBACK_READS, 'Home-feed reads answered from Postgres alone because Redis was unavailable'),
      refills: registry.counter(METRIC_REFILLS, 'Extra reads of the lists to refill a page (entries dropped, or slices ran out)'),
      dropped: registry.counter(METRIC_DROPPED, 'Feed entries dropped on read (deleted posts, authors no longer followed)'),
    };
    const onError = (what: string) => (err: unknown) => this.warn(what, err);
    this.followees = new FolloweeCache({
      repo: o.repo,
      redis: this.redis,
      keys: o.timelines.keys,
      threshold: this.threshold,
      ttlMs: o.followeeTtlMs,
      clock: this.clock,
      onError: onError('followee reload'),
      loads: registry.counter(METRIC_FOLLOWEE_LOADS, "Readers' followee sets loaded from Postgres, by reason (new, expired, refresh: in the background, token: followed or unfollowed, stranger)", {
        labelNames: ['reason'],
      }),
      staleUsed: registry.counter(METRIC_STALE_FOLLOWEES, 'Home-feed reads that used a followee set past its age because Postgres was unavailable'),
    });
    this.pulledAuthors = new PulledAuthorsView(new PulledAuthorRegistry(this.redis, o.timelines.keys, this.clock), { pollMs: o.pulledPollMs, clock: this.clock });
    this.activity = new UserActivity({
      repo: o.repo,
      timelines: o.timelines,
      dormantMs: o.dormantMs,
      touchEveryMs: o.touchEveryMs,
      clock: this.clock,
      returns: registry.counter(METRIC_DORMANT_RETURNS, 'Dormant readers back: their stale timeline was dropped and rebuilt'),
      onError: onError('last-seen update'),
    });
    this.hydrator = new PostHydrator({
      repo: o.repo,
      bodies: o.bodies,
      lookups: registry.counter(METRIC_BODY_LOOKUPS, 'Post bodies looked up for feed pages, by result (hit: cached; miss: read from Postgres)', {
        labelNames: ['result'],
      }),
      onError: onError('body cache write-back'),
    });
  }

  /** The reader's home feed, one page. NotFoundError for an unknown user. */
  async homeFeed(userId: number, page: PageRequest): Promise<FeedPage> {
    if (!Number.isSafeInteger(page.limit) || page.limit < 1) throw new BadRequestError(`limit ${page.limit} must be a positive integer`);
    await this.activity.arrive(userId);
    if (cacheReady(this.redis) && this.clock() >= this.cacheDownUntil) {
      try {
        return await this.assemble(page, await this.cacheSource(userId));
      } catch (err) {
        if (!isCacheUnavailable(err, this.redis)) throw err;
        this.cacheDownUntil = this.clock() + CACHE_BACKOFF_MS;
        this.warn('Redis', err);
      }
    }
    this.metrics.fallback.inc();
    return this.assemble(page, await this.postgresSource(userId));
  }

  /** Make sure the reader's timeline exists, rebuilding it from Postgres (single-flight). */
  async ensureTimeline(userId: number): Promise<void> {
    this.metrics.coldStarts.inc({ list: 'timeline' });
    const { timelines, repo } = this.o;
    const outcome = await this.o.rebuilds.ensure(timelineKey(userId), () =>
      timelines.rebuild(userId, () => repo.rebuildTimeline(userId, Math.max(0, this.clock() - timelines.shape.leaseMs), timelines.shape.cap, this.threshold)),
    );
    if (outcome === 'rebuilt') this.metrics.rebuilds.inc({ list: 'timeline' });
  }

  /** Make sure an author's recent list exists, rebuilding it from their newest posts (single-flight). */
  async ensureRecentList(authorId: number): Promise<void> {
    this.metrics.coldStarts.inc({ list: 'recent' });
    const { authorPosts, repo } = this.o;
    const outcome = await this.o.rebuilds.ensure(authorPostsKey(authorId), () =>
      authorPosts.rebuild(authorId, async () => {
        const rows = await repo.userPostsPage(authorId, null, authorPosts.shape.cap);
        this.hydrator.remember(rows).catch((err) => this.warn('body cache write-back', err));
        return rows.map(position);
      }),
    );
    if (outcome === 'rebuilt') this.metrics.rebuilds.inc({ list: 'recent' });
  }

  // ---- the page ----

  private async assemble(page: PageRequest, source: FeedSource): Promise<FeedPage> {
    const { limit } = page;
    const verdicts = new Map<PostId, Verdict>();
    const keep = (e: FeedPosition) => verdicts.get(e.id) !== null;
    const posts: PostView[] = [];
    let from = page.cursor;
    let count = firstSlice(limit);
    for (let round = 0; round < MAX_ROUNDS; round++) {
      if (round > 0) this.metrics.refills.inc();
      const { timeline, lists } = await source.fetch(from, count, round);
      for (;;) {
        const merged = mergeFeed(timeline, lists, { limit: limit - posts.length, cursor: from, keep });
        const unjudged = merged.entries.filter((e) => !verdicts.has(e.id));
        if (unjudged.length > 0) {
          // Hydrate them together; the next merge drops the rejected and takes the next in line.
          await source.judge(unjudged, verdicts);
          continue;
        }
        for (const e of merged.entries) posts.push(verdicts.get(e.id) as PostView);
        if (posts.length === limit) return { posts, nextCursor: merged.next };
        if (!merged.needsMore) return { posts, nextCursor: null };
        // A slice ran out: read on from past everything placed or dropped.
        from = merged.next;
        break;
      }
      count = Math.min(count * 2, MAX_FETCH);
    }
    return { posts, nextCursor: from };
  }

  /** Verdicts from hydration and the followee filter. A post by a stranger reloads the followee set
   * once per page: always when the timeline may be healed (only a set loaded after the slice was
   * read may confirm a removal for good), else when the set is STRANGER_RELOAD_AFTER_MS old (a
   * follow made through another instance). */
  private async judge(
    userId: number,
    entries: readonly FeedPosition[],
    hydrate: (ids: PostId[]) => Promise<Map<PostId, Verdict>>,
    follows: FolloweeView,
    verdicts: Map<PostId, Verdict>,
    healTimeline: boolean,
  ): Promise<void> {
    const ids = entries.map((e) => e.id);
    const found = await hydrate(ids);
    const stranger = (v: Verdict | undefined): v is PostView => !!v && v.authorId !== userId && !follows.info.all.has(v.authorId);
    const stale = healTimeline || this.clock() - follows.info.loadedAt >= STRANGER_RELOAD_AFTER_MS;
    if (!follows.reloaded && stale && ids.some((id) => stranger(found.get(id)))) {
      follows.reloadedAfterFetch = follows.fetches;
      follows.info = await this.followees.reload(userId, 'stranger');
      follows.reloaded = true;
    }
    const strangers: PostId[] = [];
    let dropped = 0;
    for (const id of ids) {
      let v = found.get(id) ?? null;
      if (stranger(v)) {
        strangers.push(id);
        v = null;
      }
      if (v === null) dropped++;
      verdicts.set(id, v);
    }
    if (dropped > 0) this.metrics.dropped.inc(undefined, dropped);
    // Confirmed by a set loaded after these entries were read: take them out of the timeline for
    // good. A set loaded earlier may predate a follow whose backfill the slice already holds.
    if (healTimeline && strangers.length > 0 && follows.reloaded && follows.reloadedAfterFetch === follows.fetches) {
      this.o.timelines.removeEntries(userId, strangers).catch((err) => this.warn('timeline cleanup', err));
    }
  }

  // ---- sources ----

  private async cacheSource(userId: number): Promise<FeedSource> {
    const { timelines, authorPosts } = this.o;
    // At threshold 0 (the pull policy) every followee is over it: the registry adds nothing.
    const [info, marked] = await Promise.all([this.followees.get(userId), this.threshold === 0 ? NO_MARKS : this.pulledAuthors.current()]);
    const follows: FolloweeView = { info, reloaded: false, fetches: 0, reloadedAfterFetch: -1 };
    let authors: number[] = [];
    let requests: SliceRequest[] = [];
    const plan = () => {
      // The reader's own list first, then the pulled authors' (the reader never follows themself).
      authors = [userId, ...pulledOf(follows.info, marked).filter((a) => a !== userId)];
      requests = [{ key: timelines.key(userId) }, ...authors.map((a) => ({ key: authorPosts.key(a) }))];
    };
    plan();
    const renewing = () => requests.map((r, i) => ({ key: r.key, renewMs: i === 0 ? timelines.shape.leaseMs : authorPosts.shape.leaseMs }));
    return {
      fetch: async (from, count, round) => {
        follows.fetches++;
        let slices: (FeedSlice<FeedPosition> | null)[];
        if (round === 0) {
          // The first read renews every lease and reads the reader's follows token in the same round trip.
          const first = await readSlicesAnd(this.redis, renewing(), { cursor: from, limit: count }, [this.followees.tokenKey(userId)]);
          slices = first.slices;
          if (first.values[0] !== follows.info.token) {
            // They followed or unfollowed someone (through any API instance) since the set was
            // loaded: reload it, and read the lists it names.
            follows.info = await this.followees.reload(userId, 'token');
            plan();
            slices = await readSlices(this.redis, renewing(), { cursor: from, limit: count });
          }
        } else {
          // Refills only check presence.
          slices = await readSlices(this.redis, requests, { cursor: from, limit: count });
        }
        const missing = slices.flatMap((s, i) => (s === null ? [i] : []));
        if (missing.length > 0) {
          await Promise.all(missing.map((i) => (i === 0 ? this.ensureTimeline(userId) : this.ensureRecentList(authors[i - 1]))));
          const again = await readSlices(
            this.redis,
            missing.map((i) => requests[i]),
            { cursor: from, limit: count },
          );
          again.forEach((s, j) => {
            if (s === null) throw new CacheInconsistentError(`${requests[missing[j]].key} is missing right after its rebuild`);
            slices[missing[j]] = s;
          });
        }
        return { timeline: slices[0] as FeedSlice<FeedPosition>, lists: slices.slice(1) as FeedSlice<FeedPosition>[] };
      },
      judge: (entries, verdicts) => this.judge(userId, entries, (ids) => this.hydrator.hydrate(ids), follows, verdicts, true),
    };
  }

  private async postgresSource(userId: number): Promise<FeedSource> {
    const { timelines, repo } = this.o;
    // Without the registry of pulled authors (in Redis): the rebuild query covers every author at or
    // under the threshold whatever their mark, and the lists below every author over it.
    const follows: FolloweeView = { info: await this.followees.get(userId, false), reloaded: false, fetches: 0, reloadedAfterFetch: -1 };
    const authors = [userId, ...pulledOf(follows.info, null).filter((a) => a !== userId)];
    let timeline: FeedPosition[] | null = null;
    const known = new Map<PostId, PostView>();
    return {
      fetch: async (from, count) => {
        const since = Math.max(0, this.clock() - timelines.shape.leaseMs);
        const [rebuilt, ...pages] = await Promise.all([
          timeline ?? repo.rebuildTimeline(userId, since, timelines.shape.cap, this.threshold),
          ...authors.map((a) => repo.userPostsPage(a, from, count)),
        ]);
        timeline = rebuilt as FeedPosition[];
        const lists = (pages as Awaited<ReturnType<FeedRepository['userPostsPage']>>[]).map((rows) => {
          for (const row of rows) known.set(row.id, viewOf(row));
          return { entries: rows.map(position), more: rows.length === count };
        });
        return { timeline, lists };
      },
      judge: (entries, verdicts) =>
        this.judge(
          userId,
          entries,
          async (ids) => {
            const out = new Map<PostId, Verdict>();
            const rest = ids.filter((id) => {
              const v = known.get(id);
              if (v) out.set(id, v);
              return !v;
            });
            if (rest.length > 0) {
              const rows = await repo.getPosts(rest);
              for (const id of rest) {
                const row = rows.get(id);
                out.set(id, row && !row.deleted ? viewOf(row) : null);
              }
            }
            return out;
          },
          follows,
          verdicts,
          false,
        ),
    };
  }

  /** One line per kind of trouble at most every 10 s. */
  private warn(what: string, err: unknown): void {
    const say = this.o.onWarning;
    if (!say) return;
    const now = Date.now();
    if ((this.warnedAt.get(what) ?? 0) + 10_000 > now) return;
    this.warnedAt.set(what, now);
    const text = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').slice(0, 300);
    say(what === 'Redis' ? `Redis unavailable (${text}): answering home feeds from Postgres` : `${what} failed: ${text}`);
  }
}
