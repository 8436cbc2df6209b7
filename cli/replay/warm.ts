// The starting state's caches, as the simulator assumes them (replay.warm: true): every active
// reader's first feed page read once through the running server, so its own read path rebuilds the
// timeline, the recent lists it merges and the followee set, and caches the page's bodies, exactly
// as a cold start would; then the timelines the fan-out keeps for dormant readers (none, unless
// dormant followers are not skipped) rebuilt with the server's own cache code, without a read that
// would make them active.
import type { Redis } from 'ioredis';
import { SECONDS_PER_DAY } from '../../core/timeline-rules.js';
import { readPullThreshold, type FanoutPolicy } from '../../core/fanout-policy.js';
import { keyspace } from '../../server/cache/redis.js';
import { TimelineCache } from '../../server/cache/timelines.js';
import type { Store } from '../../server/store/pool.js';
import { FeedRepository } from '../../server/store/repository.js';
import { getRequest, openConnections, overConnections, request } from '../../sim/replay/http-client.js';
import type { Scenario } from '../../sim/scenario/types.js';
import { REPLAY } from './settings.js';


export interface WarmFigures {
  readers: number;
  dormantTimelines: number;
  seconds: number;
}

export async function warmCaches(o: {
  host: string;
  port: number;
  token: (user: number) => string;
  readers: Int32Array;
  dormantKept: readonly number[];
  pageSize: number;
  redis: Redis;
  store: Store;
  keyPrefix: string;
  scenario: Scenario;
  policy: FanoutPolicy;
  onProgress?: (fraction: number, detail: string) => void;
  /** Stops the pass (what was warmed stays). */
  signal?: AbortSignal;
}): Promise<WarmFigures> {
  const t0 = performance.now();
  const hostHeader = `${o.host}:${o.port}`;
  const conns = await openConnections(o.host, o.port, Math.min(REPLAY.warmConnections, Math.max(1, o.readers.length)));
  let done = 0;
  const failures = new Map<number, number>();
  try {
    await overConnections(conns, o.readers.length, async (conn, i) => {
      if (o.signal?.aborted) return;
      const r = await request(conn, getRequest(hostHeader, `/v1/feed?limit=${o.pageSize}`, o.token(o.readers[i])));
      if (r.status !== 200) failures.set(r.status, (failures.get(r.status) ?? 0) + 1);
      if (++done % 500 === 0) o.onProgress?.(done / o.readers.length, `${done}/${o.readers.length} readers`);
    });
  } finally {
    for (const c of conns) c.close();
  }
  if (failures.size > 0) {
    throw new Error(`the warm pass got ${[...failures].map(([s, n]) => `${n} x HTTP ${s}`).join(', ')} from the server`);
  }
  const sc = o.scenario;
  if (o.dormantKept.length > 0) {
    const leaseMs = Math.round(sc.policy.leaseDays * SECONDS_PER_DAY * 1000);
    const timelines = new TimelineCache(o.redis, keyspace(o.keyPrefix), { cap: sc.policy.timelineCap, leaseMs });
    const repo = new FeedRepository(o.store);
    const threshold = readPullThreshold(o.policy);
    let next = 0;
    const lane = async () => {
      while (next < o.dormantKept.length) {
        const u = o.dormantKept[next++];
        await timelines.rebuild(u, () => repo.rebuildTimeline(u, Date.now() - leaseMs, sc.policy.timelineCap, Math.min(threshold, Number.MAX_SAFE_INTEGER)));
      }
    };
    await Promise.all(Array.from({ length: REPLAY.warmRebuildLanes }, lane));
  }
  o.onProgress?.(1, `${o.readers.length} readers`);
  return { readers: o.readers.length, dormantTimelines: o.dormantKept.length, seconds: (performance.now() - t0) / 1000 };
}
