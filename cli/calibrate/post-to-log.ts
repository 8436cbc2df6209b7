// The hop from a post's commit to its event in the event log: the post's createdAt (set in its
// transaction, which commits it with its outbox row) to the Redis Streams entry the outbox relay
// appends (the entry id's millisecond part, Redis's clock). Measured to the log, not to a worker
// taking the event: the entry id is exact where a worker's take is not visible from outside.
// Self-contained: posts sent at random (Poisson) times through the API, one sample a round; against
// a target: the newest entries its log holds (its own traffic, nothing posted).
import type { Redis } from 'ioredis';
import { eventStreamKey } from '../../core/keys.js';
import { decodePostEvent } from '../../server/events/event-log.js';
import { QUANTILES, type Distribution } from '../../sim/calibration/document.js';
import { quantilesOf } from '../../sim/calibration/figures.js';
import { KeepAliveConnection, postRequest, request } from '../../sim/replay/http-client.js';
import { Rng } from '../../sim/random.js';
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

/** Posts through the API at Poisson times, then their events found in the log. */
export async function measurePostToLog(
  o: { host: string; port: number; token: (user: number) => string; authors: readonly number[]; log: LogTarget; seed: number },
  rounds: Rounds,
  /** Called before the first round that is kept (after the warm-up). */
  beforeKept?: () => Promise<void>,
): Promise<Distribution> {
  const p = CALIBRATE.postToLog;
  const rng = new Rng(o.seed);
  const free: KeepAliveConnection[] = [];
  const opened: KeepAliveConnection[] = [];
  const host = `${o.host}:${o.port}`;
  const kept = new Set<string>();
  let next = 0;
  const send = async (author: number, keep: boolean) => {
    let conn = free.pop();
    if (!conn || conn.closed) opened.push((conn = await KeepAliveConnection.open(o.host, o.port)));
    const r = await request(conn, postRequest(host, '/v1/posts', o.token(author), { text: 'measuring the hop to the event log' }));
    free.push(conn);
    if (r.status !== 201) throw new Error(`calibrate: a post was answered ${r.status}: ${r.body.toString('utf8').slice(0, 200)}`);
    if (keep) kept.add((JSON.parse(r.body.toString('utf8')) as { id: string }).id);
  };
  try {
    let first = true;
    await inRounds(rounds, async (keep) => {
      if (keep && first) {
        first = false;
        await beforeKept?.();
      }
      const sent: Promise<void>[] = [];
      const start = performance.now();
      let at = 0;
      for (let i = 0; i < p.postsPerSample; i++) {
        at += rng.exponential(p.perSecond) * 1000;
        const wait = start + at - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        sent.push(send(o.authors[next++ % o.authors.length], keep));
      }
      await Promise.all(sent);
    });
  } finally {
    for (const c of opened) c.close();
  }
  await new Promise((r) => setTimeout(r, p.relaySettleMs));
  const times = await logTimes(o.log);
  const lags: number[] = [];
  for (const id of kept) {
    const t = times.get(id);
    if (t) lags.push((t.logMs - t.createdAt) / 1000);
  }
  if (lags.length < kept.size) throw new Error(`calibrate: ${kept.size - lags.length} of ${kept.size} posts were not in the event log ${p.relaySettleMs} ms after the last (is the outbox relay running?)`);
  return distribution(lags);
}

/** A target's log: the newest entries of each partition (its own traffic). */
export async function recentPostToLog(log: LogTarget, perPartition: number): Promise<Distribution> {
  const times = await logTimes(log, perPartition);
  return distribution([...times.values()].map((t) => (t.logMs - t.createdAt) / 1000));
}
