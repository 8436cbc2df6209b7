// The fan-out worker's shape: how many post events it takes at once, how it reads an author's
// followers and how it writes their timelines. The reference worker (server/worker) runs with these
// defaults and the simulator models the same shape (infrastructure.worker in a scenario).

/** Timelines written per pipelined batch (one round trip). */
export const DEFAULT_FANOUT_BATCH = 1_000;
/** Pipelined batches in flight per fan-out. */
export const DEFAULT_PIPELINES = 2;
/** Authors handled at once within one batch of events (one author's events in order). */
export const DEFAULT_EVENT_CONCURRENCY = 8;
/** Post events taken from the log per read. */
export const DEFAULT_EVENT_BATCH = 100;
/** Followers read from Postgres per page while expanding a post. */
export const DEFAULT_FOLLOWER_PAGE = 10_000;
/** Event-log partitions of the reference deployment (a scenario states its own). */
export const DEFAULT_PARTITIONS = 16;
/**
 * A pushed post of this many timelines or more is a large post: its writes are almost all per
 * timeline (300 at about 18 us against a batch's 0.3 ms), and the per-follower lag's tail is made of
 * such posts, so worker and model both record a large post's writes, scaled to
 * LARGE_WRITES_PER_TIMELINES of its timelines (a microsecond histogram then keeps 3 digits of a few
 * microseconds a timeline); result documents give them per timeline (largeWritesPerTimeline).
 */
export const LARGE_POST_TIMELINES = 300;
export const LARGE_WRITES_PER_TIMELINES = 1_000;
