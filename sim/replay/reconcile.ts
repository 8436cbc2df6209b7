// The reconciliation that ends every replay, once the fan-out has settled: what the server said
// against what its stores hold. Every post answered 201 is in Postgres, live; no scheduled post is
// there twice; a post answered otherwise (503, 5xx, a timeout) is counted when it committed anyway;
// and every acknowledged post reached every follower the policy reaches: in the follower's cached
// timeline (a pushed post: a sorted set, so at most once), or in its author's cached list (a pulled
// one). What the read path makes up for is not a loss and is counted apart: a follower or author
// without a cached timeline or list (rebuilt from Postgres, where the post is, on the next read), and
// an entry trimmed off a full timeline by newer ones. A loss (an acknowledged post missing from
// Postgres, a duplicate, a delivery missing from a cached timeline or list) makes the replay exit 1;
// an unsettled fan-out leaves its deliveries `pending`, not lost.
import type { Redis } from 'ioredis';
import { authorPostsKey, timelineKey } from '../../core/keys.js';
import type { Store } from '../../server/store/pool.js';
import type { PostOutcome } from './driver-result.js';

/** Keys per pipeline of ZSCOREs. */
const PIPELINE = 5_000;
/** Ids quoted in the document per kind of loss. */
const QUOTED = 10;

export interface Reconciliation {
  /** The fan-out backlog drained before it ran: otherwise missing deliveries are `pending`. */
  settled: boolean;
  /** Posts answered 201, and those found in Postgres (live). */
  acknowledged: number;
  stored: number;
  /** Acknowledged and not in Postgres: lost. */
  lost: number;
  /** Scheduled posts found more than once in Postgres (same author and text). */
  duplicated: number;
  /** Posts not answered 201 that committed anyway, by answer: 503 ("retry shortly"), other statuses, no answer. */
  committedUnacknowledged: { status503: number; otherStatus: number; noAnswer: number };
  deliveries: {
    /** (post, follower) pairs of cached timelines checked (pushed posts), and those holding the post. */
    checked: number;
    delivered: number;
    /** Older than everything a full timeline (or a pulled author's full list) kept: trimmed by newer posts, not lost. */
    trimmed: number;
    /** Followers reached by the policy without a cached timeline: rebuilt from Postgres on read. */
    rebuiltOnRead: number;
    /** Pulled posts whose author's cached list holds them, of those with a cached list; lists not cached. */
    pulledChecked: number;
    pulledListed: number;
    pulledRebuiltOnRead: number;
    /** Not where they should be: lost when settled, pending when not. */
    missing: number;
    /** Posts whose path the policy decided at run time (adaptive): not checked. */
    unchecked: number;
  };
  /** A few ids of each loss, for a look. */
  examples: { lost: string[]; missing: string[] };
  /** lost + duplicated + (settled ? missing : 0) === 0. */
  ok: boolean;
  /** Which scheduled posts (indices of the input's posts) were lost, duplicated or missing a
   * delivery: a fault's share of them is counted over its span (not enumerable: not in the JSON). */
  byPost: { lost: ReadonlySet<number>; duplicated: ReadonlySet<number>; missing: ReadonlySet<number> };
}

export interface ReconcileInput {
  redis: Redis;
  store: Store;
  keyPrefix: string;
  posts: readonly PostOutcome[];
  /** The text scheduled post i was sent with. */
  textOf: (i: number) => string;
  /** Followers of an author (graph ids, as loaded). */
  followersOf: (author: number) => ArrayLike<number>;
  /** Whether the policy pushes this author's posts (else they are pulled from its list); null: it
   * decides at run time (adaptive), and the post's deliveries are not checked. */
  pushed: (author: number) => boolean | null;
  /** Whether a push reaches this follower (not dormant, not capped away). */
  reached: (follower: number) => boolean;
  timelineCap: number;
  /** An author's recent list's cap (a pulled author's older posts leave it as it fills). */
  listCap: number;
  /** Posts made from here on (ms) are the run's: an earlier post of the same text is not a duplicate. */
  sinceMs: number;
  settled: boolean;
}

export async function reconcile(o: ReconcileInput): Promise<Reconciliation> {
  const acknowledged = o.posts.filter((p) => p.status === 201 && p.id !== null);
  const ids = acknowledged.map((p) => p.id!);
  const live = new Set<string>();
  for (let i = 0; i < ids.length; i += PIPELINE) {
    const r = await o.store.pool.query<{ id: string }>('SELECT id::text AS id FROM posts WHERE id = ANY($1::int8[]) AND deleted_at IS NULL', [ids.slice(i, i + PIPELINE)]);
    for (const row of r.rows) live.add(row.id);
  }
  const lostIds = ids.filter((id) => !live.has(id));

  // every scheduled post by its author and text: duplicates, and what committed without a 201
  const sent = o.posts.map((p, i) => ({ p, i })).filter(({ p }) => p.sentMs !== null);
  const count = new Map<string, number>();
  for (let i = 0; i < sent.length; i += PIPELINE) {
    const part = sent.slice(i, i + PIPELINE);
    const r = await o.store.pool.query<{ author: string; body: string; n: string }>(
      `SELECT author_id::text AS author, body, count(*)::text AS n FROM posts
       WHERE (author_id, body) IN (SELECT * FROM unnest($1::int8[], $2::text[])) AND created_at >= $3 GROUP BY author_id, body`,
      [part.map(({ p }) => p.authorId), part.map(({ i }) => o.textOf(i)), new Date(o.sinceMs)],
    );
    for (const row of r.rows) count.set(`${row.author}\n${row.body}`, Number(row.n));
  }
  const duplicatedAt = new Set<number>();
  const committedUnacknowledged = { status503: 0, otherStatus: 0, noAnswer: 0 };
  for (const { p, i } of sent) {
    const n = count.get(`${p.authorId}\n${o.textOf(i)}`) ?? 0;
    if (n > 1) duplicatedAt.add(i);
    if (n > 0 && p.status !== 201) {
      if (p.status === 503) committedUnacknowledged.status503++;
      else if (p.status === 0) committedUnacknowledged.noAnswer++;
      else committedUnacknowledged.otherStatus++;
    }
  }

  const { examples, missingIds, ...deliveries } = await checkDeliveries(o, acknowledged.filter((p) => live.has(p.id!)));
  const missing = deliveries.missing;
  const duplicated = duplicatedAt.size;
  const indexOf = new Map(o.posts.map((p, i) => [p.id, i]));
  const indices = (ids: Iterable<string>) => new Set([...ids].map((id) => indexOf.get(id)!));
  const result: Reconciliation = {
    settled: o.settled,
    acknowledged: acknowledged.length,
    stored: acknowledged.length - lostIds.length,
    lost: lostIds.length,
    duplicated,
    committedUnacknowledged,
    deliveries,
    examples: { lost: lostIds.slice(0, QUOTED), missing: examples },
    ok: lostIds.length + duplicated + (o.settled ? missing : 0) === 0,
    byPost: { lost: indices(lostIds), duplicated: duplicatedAt, missing: indices(missingIds) },
  };
  Object.defineProperty(result, 'byPost', { enumerable: false });
  return result;
}

type Checked = Reconciliation['deliveries'] & { examples: string[]; missingIds: Set<string> };

/** Each stored post against the cached timelines of the followers it reaches (or its author's list). */
async function checkDeliveries(o: ReconcileInput, posts: readonly PostOutcome[]): Promise<Checked> {
  const out: Checked = { checked: 0, delivered: 0, trimmed: 0, rebuiltOnRead: 0, pulledChecked: 0, pulledListed: 0, pulledRebuiltOnRead: 0, missing: 0, unchecked: 0, examples: [], missingIds: new Set() };
  const miss = (post: string, where: string) => {
    out.missing++;
    out.missingIds.add(post);
    if (out.examples.length < QUOTED) out.examples.push(`${post} in ${where}`);
  };
  // pushed: (post, follower) pairs; pulled: the author's list
  const pairs: { post: PostOutcome; key: string }[] = [];
  for (const post of posts) {
    const pushed = o.pushed(post.authorId);
    if (pushed === null) {
      out.unchecked++;
      continue;
    }
    if (!pushed) {
      pairs.push({ post, key: o.keyPrefix + authorPostsKey(post.authorId) });
      continue;
    }
    const followers = o.followersOf(post.authorId);
    for (let k = 0; k < followers.length; k++) if (o.reached(followers[k])) pairs.push({ post, key: o.keyPrefix + timelineKey(followers[k]) });
  }
  for (let i = 0; i < pairs.length; i += PIPELINE) {
    const part = pairs.slice(i, i + PIPELINE);
    const p = o.redis.pipeline();
    // the member's score, whether the key exists, its size and its oldest score (for a trim)
    for (const { post, key } of part) p.zscore(key, post.id!).exists(key).zcard(key).zrange(key, 0, 0, 'WITHSCORES');
    const replies = (await p.exec()) ?? [];
    part.forEach(({ post, key }, j) => {
      const [score, exists, size, oldest] = replies.slice(j * 4, j * 4 + 4).map(([err, v]) => (err ? null : v));
      const pulled = key.endsWith(':recent');
      if (Number(exists) === 0) {
        if (pulled) out.pulledRebuiltOnRead++;
        else out.rebuiltOnRead++;
        return;
      }
      if (pulled) out.pulledChecked++;
      else out.checked++;
      if (score !== null) {
        if (pulled) out.pulledListed++;
        else out.delivered++;
        return;
      }
      // a full timeline or list keeps the newest: an entry older than its oldest was trimmed
      const oldestScore = Array.isArray(oldest) && oldest.length === 2 ? Number(oldest[1]) : NaN;
      if (Number(size) >= (pulled ? o.listCap : o.timelineCap) && post.createdAt !== null && post.createdAt <= oldestScore) out.trimmed++;
      else miss(post.id!, key.slice(o.keyPrefix.length));
    });
  }
  return out;
}

/** One line: what was lost, duplicated or missing, and what committed without a 201. */
export function reconciliationLine(r: Reconciliation): string {
  const d = r.deliveries;
  const parts = [
    `${r.stored} of ${r.acknowledged} acknowledged posts in Postgres${r.lost > 0 ? ` (${r.lost} LOST: ${r.examples.lost.slice(0, 3).join(', ')})` : ''}`,
    `${r.duplicated} duplicated`,
    `${d.delivered} of ${d.checked} deliveries to cached timelines${d.trimmed > 0 ? ` (+${d.trimmed} trimmed by newer posts)` : ''}, ${d.pulledListed} of ${d.pulledChecked} pulled posts in their author's list`,
  ];
  if (d.missing > 0) parts.push(`${d.missing} ${r.settled ? 'MISSING' : 'pending (the fan-out had not settled)'}: ${r.examples.missing.slice(0, 3).join(', ')}`);
  const c = r.committedUnacknowledged;
  if (c.status503 + c.otherStatus + c.noAnswer > 0) parts.push(`committed without a 201: ${c.status503} answered 503, ${c.otherStatus} another status, ${c.noAnswer} unanswered`);
  return parts.join('; ');
}
