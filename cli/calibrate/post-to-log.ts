// The hop from a post's commit to its event in the event log: the post's createdAt (set in its
// transaction, which commits it with its outbox row) to the Redis Streams entry the outbox relay
// appends (the entry id's millisecond part, Redis's clock). Measured to the log, not to a worker
// taking the event: the entry id is exact where a worker's take is not visible from outside.
// Self-contained: posts sent at random (Poisson) times through the API, one sample a round; against
// a target: the newest entries its log holds (its own traffic, nothing posted). The same posts give
// the server's own time from a post's creation to its author's list holding it (its Server-Timing
// `listed`, core/server-timing.ts): when a pulled post is delivered.
import type { Redis } from 'ioredis';
import { eventStreamKey } from '../../core/keys.js';
import { decodePostEvent } from '../../server/events/event-log.js';
import { QUANTILES, type Distribution } from '../../sim/calibration/document.js';
import { quantilesOf } from '../../sim/calibration/figures.js';
import { Rng } from '../../core/random.js';
import { PacedPoster, type PostTarget } from './paced-posts.js';
import { inRounds, type Rounds } from './rounds.js';
import { CALIBRATE } from './settings.js';

export interface LogTarget {
  redis: Redis;
  streamPrefix: string;
  partitions: number;
}

type Entry = [id: string, fields: string[]];

/** Post id -> the ms its event entered the log, over every partition (the newest `count` of each when given). */
async function logTimes(t: LogTarget, count?: number): Promise<Map<string, { logMs: number; createdAt: number }>> {
  const out = new Map<string, { logMs: number; createdAt: number }>();
  for (let p = 0; p < t.partitions; p++) {
    const key = eventStreamKey(t.streamPrefix, p);
    const entries = (count === undefined ? await t.redis.xrange(key, '-', '+') : await t.redis.xrevrange(key, '+', '-', 'COUNT', count)) as Entry[];
    for (const [id, fields] of entries) {
      const at = fields.indexOf('event');
      if (at < 0 || at + 1 >= fields.length) continue;
      try {
        const e = decodePostEvent(fields[at + 1]);
        if (e.kind === 'PostCreated') out.set(e.postId, { logMs: Number(id.split('-')[0]), createdAt: e.createdAt });
      } catch {
        // not an event of ours
      }
    }
  }
  return out;
}

const distribution = (lags: number[]): Distribution => ({ points: quantilesOf(lags, QUANTILES), n: lags.length });

export interface PostToLogFigures {
  /** createdAt to the log. */
  hop: Distribution;
  /** createdAt to the author's list holding the post, by the server's Server-Timing; null: it sent none. */
  listed: Distribution | null;
}

/** Posts through the API at Poisson times, then their events found in the log. */
export async function measurePostToLog(
  o: PostTarget & { authors: readonly number[]; log: LogTarget; seed: number },
  rounds: Rounds,
  /** Called before the first round that is kept (after the warm-up). */
  beforeKept?: () => Promise<void>,
): Promise<PostToLogFigures> {
  const p = CALIBRATE.postToLog;
  const poster = new PacedPoster(o, new Rng(o.seed));
  const kept = new Set<string>();
  let next = 0;
  try {
    let first = true;
    await inRounds(rounds, async (keep) => {
      if (keep && first) {
        first = false;
        await beforeKept?.();
      }
      const ids = await poster.send(p.postsPerSample, p.perSecond, () => o.authors[next++ % o.authors.length], 'measuring the hop to the event log');
      if (keep) for (const id of ids) kept.add(id);
    });
  } finally {
    poster.close();
  }
  await new Promise((r) => setTimeout(r, p.relaySettleMs));
  const times = await logTimes(o.log);
  const lags: number[] = [];
  const listed: number[] = [];
  for (const id of kept) {
    const t = times.get(id);
    if (t) lags.push((t.logMs - t.createdAt) / 1000);
    const ms = poster.listedAfterMs.get(id);
    if (ms !== undefined) listed.push(ms / 1000);
  }
  if (lags.length < kept.size) throw new Error(`calibrate: ${kept.size - lags.length} of ${kept.size} posts were not in the event log ${p.relaySettleMs} ms after the last (is the outbox relay running?)`);
  return { hop: distribution(lags), listed: listed.length > 0 ? distribution(listed) : null };
}

/** A target's log: the newest entries of each partition (its own traffic). */
export async function recentPostToLog(log: LogTarget, perPartition: number): Promise<Distribution> {
  const times = await logTimes(log, perPartition);
  return distribution([...times.values()].map((t) => (t.logMs - t.createdAt) / 1000));
}
