// The fan-out workers' metrics as they travel between processes: every worker process publishes one
// document (this file's ExportedMetrics, as JSON) into the hash at core/keys.ts WORKER_METRICS_KEY,
// field = its consumer base name. The API renders the hash in /metrics
// (server/http/fleet-metrics.ts); replay reads it with a client of its own. The names of the
// histograms and counters are here so that both sides agree on them.
//
// Histograms are HDR histograms (hdr-histogram-js, bitBucketSize 64) of microseconds, 3 significant
// digits, compressed base64: hdr.decodeFromCompressedBase64(encoded, 64) reads one. sumMs is the sum
// of the samples in ms (weighted by their counts), for an exact mean: sumMs / totalCount.

export const WORKER_METRICS_SCHEMA = 'feedlab.worker-metrics/1';

/** How often a worker process publishes its document (and at once when asked: SIGUSR2 to `feedlab worker`). */
export const METRICS_INTERVAL_MS = 5_000;

/** HDR values per ms of a sample (the histograms hold microseconds). */
export const HISTOGRAM_UNITS_PER_MS = 1000;

export const HISTOGRAMS = {
  fanoutLagPushMs: 'post creation to the last follower timeline written (pushed authors), ms',
  fanoutLagPullMs: "post creation to the author's recent-list write (pulled authors), ms",
  fanoutFollowerLagPushMs: 'post creation to each follower timeline written, one sample per timeline (pushed authors), ms',
  fanoutFollowerLagPullMs: "post creation to the author's recent-list write, one sample per follower (pulled authors), ms",
  batchMs: 'one pipelined round trip of timeline writes, ms',
  eventMs: 'handling one post event, ms',
  eventPickupMs: 'a post event entering the log to a worker starting on it (first deliveries), ms',
  eventPickupIdleMs: 'the same, of the events that entered the log while the read that took them waited (a blocked read woken, not a busy consumer), ms',
  eventStatementsMs: "a post event's statement before its fan-out: the author's follower count, ms",
  eventFirstPageMs: "a pushed post's first page of followers, with its list add and pulled-mark lookup sent beside it, ms",
  eventWritesMs: "a pushed post's timeline writes: its first follower page in hand to its last batch answered, ms",
  largeWritesPerThousandMs: "a large pushed post's timeline writes (core/fanout-worker.ts LARGE_POST_TIMELINES or more) scaled to LARGE_WRITES_PER_TIMELINES (1,000) of the timelines it wrote, ms",
  eventLoopDelayMs: "how late the worker's event loop ran a timer due every 10 ms (an event arriving then waited as long), ms",
} as const;

export const COUNTERS = {
  eventsCreated: 'PostCreated events handled',
  eventsDeleted: 'PostDeleted events handled',
  postsPushed: 'posts pushed into follower timelines',
  postsPulled: "posts written only to their author's recent list (over the threshold)",
  timelineWrites: 'timelines a post was added to',
  timelineDuplicates: 'timelines that already held the post (redelivery): nothing written',
  timelinesMissing: 'followers without a cached timeline: nothing written (rebuilt on read)',
  timelinesPending: 'writes into the pending set of a timeline being rebuilt',
  dormantSkipped: 'followers skipped as dormant',
  readerCapDropped: 'deliveries dropped by the reader-side cap',
  batches: 'pipelined batches of timeline writes',
  listWrites: "posts added to an author's recent list",
  listRemovals: "deleted posts removed from an author's recent list",
  pathTransitions: 'authors moved from pull back to push (their recent posts backfilled)',
  unknownAuthors: 'events whose author does not exist (skipped)',
  handlerFailures: 'batches whose handling failed (redelivered)',
  eventLogLosses: 'times the event log was found to have lost its entries (a consumer group gone that had been created)',
  eventsRepublished: 'outbox rows published again after an event log loss (their fan-out not known to be done)',
} as const;

export type HistogramName = keyof typeof HISTOGRAMS;
export type CounterName = keyof typeof COUNTERS;

export interface ExportedHistogram {
  /** HDR histogram of microseconds, compressed base64. */
  encoded: string;
  /** Sum of the samples in ms, each times its count. */
  sumMs: number;
}

/** One worker process's metrics, as published (JSON). */
export interface ExportedMetrics {
  schema: typeof WORKER_METRICS_SCHEMA;
  /** Who exported it (a worker's consumer name), and when (ms since the epoch). */
  source: string;
  at: number;
  counters: Partial<Record<CounterName, number>>;
  histograms: Partial<Record<HistogramName, ExportedHistogram>>;
}

/** A published entry, or null when it is not one (torn, foreign, another schema). Names this
 * version does not know are kept; readers skip them. */
export function parseExportedMetrics(text: string): ExportedMetrics | null {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return null;
  }
  if (!doc || typeof doc !== 'object') return null;
  const d = doc as Partial<ExportedMetrics>;
  if (d.schema !== WORKER_METRICS_SCHEMA || typeof d.at !== 'number' || !Number.isFinite(d.at)) return null;
  if (typeof d.source !== 'string' || !isRecord(d.counters) || !isRecord(d.histograms)) return null;
  return d as ExportedMetrics;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
