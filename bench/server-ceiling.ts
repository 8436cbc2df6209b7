// The feed-read ceiling of bench/server.ts, run in worker threads (one Redis connection each), so
// that the ceiling may use both cores as the HTTP measurement does (server process + generator).
//
// One read's Redis commands as the read path sends them (server/feed/read-path.ts cacheSource and
// assemble, server/cache/post-list.ts readSlices, server/cache/post-bodies.ts getMany), issued
// directly with ioredis: one pipeline of PEXPIRE (the lease renewal, which also tells presence) +
// ZREVRANGEBYSCORE key +inf 0 WITHSCORES LIMIT 0 (limit + FETCH_SLACK) for the reader's timeline,
// their own recent list and every celebrity list they merge, and GET of the reader's follows token;
// then one MGET of the bodies of the page's newest `limit` entries. `inFlight` reads at a time per
// connection, so the commands of many reads are pipelined on the wire.
import { isMainThread, parentPort, threadId, Worker, workerData } from 'node:worker_threads';
import { Redis } from 'ioredis';
import { Rng } from '../core/random.js';

export interface CeilingJob {
  redisUrl: string;
  /** Per reader: the keys of the lists a read slices, the timeline first. */
  lists: string[][];
  /** Per reader: the key of their follows token (read in the same pipeline). */
  tokens: string[];
  /** Prefix of the body keys (`${prefix}post:ID`). */
  bodyPrefix: string;
  page: number;
  fetch: number;
  leaseMs: number;
  inFlight: number;
  warmupMs: number;
  durationMs: number;
}

export interface CeilingReport {
  reads: number;
  seconds: number;
  bodies: number;
}

/** One read's commands; resolves with the page's bodies as cached (JSON text; null for one not cached). */
export async function ceilingRead(redis: Redis, job: Pick<CeilingJob, 'bodyPrefix' | 'page' | 'fetch' | 'leaseMs'>, keys: readonly string[], token: string): Promise<(string | null)[]> {
  const p = redis.pipeline();
  for (const key of keys) {
    p.pexpire(key, job.leaseMs);
    p.zrevrangebyscore(key, '+inf', 0, 'WITHSCORES', 'LIMIT', 0, job.fetch);
  }
  p.get(token);
  const replies = (await p.exec()) ?? [];
  const [tokenErr] = replies[2 * keys.length] ?? [new Error('no reply to GET')];
  if (tokenErr) throw tokenErr;
  const entries: { id: string; score: number }[] = [];
  for (let i = 0; i < 2 * keys.length; i += 2) {
    const [perr, present] = replies[i];
    const [err, raw] = replies[i + 1];
    if (perr || err) throw perr ?? err;
    if (present !== 1) throw new Error(`${keys[i / 2]} is missing: the ceiling reads only cached lists`);
    const r = raw as string[];
    for (let j = 0; j + 1 < r.length; j += 2) if (r[j] !== 'empty') entries.push({ id: r[j], score: Number(r[j + 1]) });
  }
  // The merge, minimal: newest first, ties by id, duplicates once.
  entries.sort((a, b) => b.score - a.score || (a.id.length !== b.id.length ? b.id.length - a.id.length : a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  const page: string[] = [];
  for (const e of entries) {
    if (page.length === job.page) break;
    if (page[page.length - 1] !== e.id && !page.includes(e.id)) page.push(e.id);
  }
  return page.length > 0 ? redis.mget(page.map((id) => job.bodyPrefix + id)) : [];
}

/** Run the job here: `inFlight` lanes on one connection; count the reads of the last durationMs. */
export async function runCeiling(job: CeilingJob): Promise<CeilingReport> {
  const redis = new Redis(job.redisUrl, { lazyConnect: true, connectionName: 'feedlab-bench-ceiling' });
  await redis.connect();
  try {
    let reads = 0;
    let bodies = 0;
    let counting = false;
    let stop = false;
    const readers = new Rng(`ceiling:${threadId}`);
    const lane = async () => {
      while (!stop) {
        const u = readers.int(job.lists.length);
        const n = (await ceilingRead(redis, job, job.lists[u], job.tokens[u])).length;
        if (counting) {
          reads++;
          bodies += n;
        }
      }
    };
    const lanes = Array.from({ length: job.inFlight }, lane);
    await new Promise((r) => setTimeout(r, job.warmupMs));
    counting = true;
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, job.durationMs));
    counting = false;
    const seconds = (performance.now() - t0) / 1000;
    stop = true;
    await Promise.all(lanes);
    return { reads, seconds, bodies };
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}

/** The job in `threads` worker threads at once; their reports. */
export function runCeilingThreads(job: CeilingJob, threads: number): Promise<CeilingReport[]> {
  return Promise.all(
    Array.from(
      { length: threads },
      () =>
        new Promise<CeilingReport>((resolve, reject) => {
          const w = new Worker(new URL(import.meta.url), { workerData: job });
          w.once('message', (m: CeilingReport | { error: string }) => ('error' in m ? reject(new Error(m.error)) : resolve(m)));
          w.once('error', reject);
          w.once('exit', (code) => code !== 0 && reject(new Error(`ceiling thread exited ${code}`)));
        }),
    ),
  );
}

if (!isMainThread && parentPort && (workerData as CeilingJob | undefined)?.lists) {
  const port = parentPort;
  runCeiling(workerData as CeilingJob).then(
    (r) => port.postMessage(r),
    (err: Error) => port.postMessage({ error: err.message }),
  );
}
