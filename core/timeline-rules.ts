// The timeline rules in one place, shared by the reference server and the simulator.
// Defaults follow the English hybrid fan-out lesson and Mastodon (ANCHORS section 1).

/** Entries kept per home timeline; every push trims to it (Mastodon MAX_ITEMS, Twitter 2012). */
export const DEFAULT_TIMELINE_CAP = 800;
/** The largest timeline cap the reference server and its workers take (they once disagreed: 100,000 and 1,000,000). */
export const MAX_LIVE_TIMELINE_CAP = 100_000;
/** A timeline's TTL lease, renewed on read and on push. */
export const DEFAULT_LEASE_DAYS = 7;
/** Followers not seen within this window get no pushes and lose their cached timeline. */
export const DEFAULT_DORMANT_DAYS = 14;
/** Authors over this many followers are pulled at read time instead of pushed. */
export const DEFAULT_CELEBRITY_THRESHOLD = 25_000;
/** Recent posts kept per pulled author. */
export const DEFAULT_CELEBRITY_LIST_LENGTH = 100;
/** Bluesky's reader-side cap: readers following more than this keep a delivery with probability cap/follows. */
export const DEFAULT_READER_CAP = 2_000;
/** Adaptive policy: the threshold halves while more timeline writes than this are queued. */
export const DEFAULT_BACKLOG_BOUND = 1_000_000;
/** Adaptive policy: the threshold never goes below this. */
export const DEFAULT_MIN_THRESHOLD = 1_000;

export const SECONDS_PER_DAY = 86_400;

/** A follower is dormant when not seen within the dormancy window. */
export function isDormant(lastSeenSeconds: number, nowSeconds: number, dormantDays: number): boolean {
  return nowSeconds - lastSeenSeconds > dormantDays * SECONDS_PER_DAY;
}

/** Length after pushing one entry into a timeline of `length` entries. */
export function lengthAfterPush(length: number, cap: number): number {
  return length < cap ? length + 1 : cap;
}
