// Bulk-load a follower graph into users and follows with binary COPY, streamed straight from the
// graph's typed arrays in chunks of about a megabyte (no string per row, no whole-table buffer).
//
// The whole load is one transaction: the tables are locked, emptied, loaded, their follows
// constraints rebuilt and analyzed, then committed. A load that fails or is interrupted leaves the
// database exactly as it was, so no half-loaded graph is ever visible.
//
// Speed: the follows primary key, its reverse index and its foreign keys are dropped before the
// COPY and rebuilt after it (one sorted build instead of 20M index insertions; the rows arrive in
// primary-key order), COPY ... FREEZE writes the rows already frozen (the tables are truncated in
// the same transaction), and maintenance_work_mem is raised for the index builds.
//
// Ids: the graph's account a becomes user id a; its handle is its name when the generator named it
// (a celebrity), else "u<a>". Follower and followee counts come from the CSR offsets. Every row is
// created at loadedAt, and last seen then too, unless lastSeenMs gives each account its own time
// (a replay's dormant share: the fan-out worker skips followers not seen within the window).
import { CHUNK_BYTES, COPY_HEADER, COPY_TRAILER, copyIn, copyRows, isCopyTime, timestampBytes, writeInt8Field, writeTimestamp } from './binary-copy.js';
import { StoreInputError } from './errors.js';
import { FOLLOWS_BULK_CONSTRAINTS } from './migrations.js';
import { connectClient, unavailable, type Store } from './pool.js';

/** What the loader reads of a graph: structurally the simulator's FollowerGraph (sim/graph/graph.ts). */
export interface GraphToLoad {
  readonly users: number;
  readonly edges: number;
  /** Length users + 1; the followers of a are followerOffsets[a] .. followerOffsets[a + 1]. */
  readonly followerOffsets: Uint32Array;
  /** Length users + 1; the accounts u follows are followeeIds[followeeOffsets[u] .. followeeOffsets[u + 1]). */
  readonly followeeOffsets: Uint32Array;
  readonly followeeIds: Uint32Array;
  /** Named accounts by id: they get their name as handle. */
  readonly names: ReadonlyMap<number, string>;
}

export interface BulkLoadOptions {
  /** Replace whatever users, follows, posts and outbox rows the schema holds. Without it the tables must be empty. */
  truncate?: boolean;
  /** (fraction 0..1, what is happening); called often, so the callee throttles. */
  onProgress?: (fraction: number, detail: string) => void;
  /** created_at (and, without lastSeenMs, last_seen_at) of every loaded row; defaults to now. */
  loadedAt?: Date;
  /** Each account's last_seen_at in ms since the epoch (length users); absent: loadedAt. */
  lastSeenMs?: Float64Array;
  /**
   * Each account's follower_count (length users), the count the fan-out policies compare with their
   * thresholds; absent: its followers in the graph. Replay stores a named celebrity's count at
   * population scale here (sim/replay/mapping.ts), so a threshold pulls it as the simulator does.
   */
  followerCounts?: Float64Array;
  /** maintenance_work_mem for the index builds of this transaction (default 1GB). */
  maintenanceWorkMem?: string;
}

export interface BulkLoadResult {
  users: number;
  follows: number;
  seconds: number;
  /** Seconds per phase, in order: copy users, copy follows, each constraint, analyze, commit. */
  phases: { name: string; seconds: number }[];
}

/** The handle the loader gives account a. */
export function handleFor(graph: Pick<GraphToLoad, 'names'>, a: number): string {
  return graph.names.get(a) ?? `u${a}`;
}

/** Longest handle the users table accepts (users_handle_length). */
const MAX_HANDLE_CHARS = 64;

/**
 * Refuse a graph the tables would reject, before any work: offsets that do not span the edges,
 * an id out of range, a self-follow, a duplicate edge, a handle clash.
 */
export function checkGraphForLoad(graph: GraphToLoad): void {
  const { users, edges, followerOffsets, followeeOffsets, followeeIds } = graph;
  if (users > 0xffffffff) throw new StoreInputError(`graph has ${users} accounts, more than the loader supports`);
  if (followerOffsets.length !== users + 1 || followeeOffsets.length !== users + 1) {
    throw new StoreInputError('graph offsets do not have one entry per account plus one');
  }
  if (followeeIds.length !== edges || followeeOffsets[users] !== edges || followerOffsets[users] !== edges) {
    throw new StoreInputError(`graph offsets do not span its ${edges} edges`);
  }
  for (let u = 0; u < users; u++) {
    const end = followeeOffsets[u + 1];
    let previous = -1;
    for (let e = followeeOffsets[u]; e < end; e++) {
      const v = followeeIds[e];
      if (v >= users) throw new StoreInputError(`graph edge ${u} -> ${v}: account ${v} does not exist (${users} accounts)`);
      if (v === u) throw new StoreInputError(`graph edge ${u} -> ${u}: an account cannot follow itself`);
      if (v <= previous) throw new StoreInputError(`graph account ${u}: followees not strictly ascending at ${v} (a duplicate edge?)`);
      previous = v;
    }
  }
  const seen = new Map<string, number>();
  for (const [a, name] of graph.names) {
    if (!Number.isInteger(a) || a < 0 || a >= users) throw new StoreInputError(`graph names account ${a}, which does not exist`);
    const chars = [...name].length;
    if (chars < 1 || chars > MAX_HANDLE_CHARS) throw new StoreInputError(`graph account ${a}: name "${name}" must be 1..${MAX_HANDLE_CHARS} characters to be a handle`);
    const generated = /^u(0|[1-9]\d*)$/.exec(name);
    if (generated && Number(generated[1]) !== a) throw new StoreInputError(`graph account ${a}: name "${name}" is the handle of account ${generated[1]}`);
    const other = seen.get(name);
    if (other !== undefined) throw new StoreInputError(`graph accounts ${other} and ${a} have the same name "${name}"`);
    seen.set(name, a);
  }
}

/** Refuse last-seen times that are not one finite time per account. */
export function checkLastSeen(lastSeenMs: Float64Array, users: number): void {
  if (!(lastSeenMs instanceof Float64Array)) throw new StoreInputError('lastSeenMs must be a Float64Array of ms since the epoch');
  if (lastSeenMs.length !== users) throw new StoreInputError(`lastSeenMs has ${lastSeenMs.length} entries for ${users} accounts`);
  for (let a = 0; a < users; a++) {
    if (!isCopyTime(lastSeenMs[a])) throw new StoreInputError(`lastSeenMs[${a}] = ${lastSeenMs[a]} is not a time (ms since the epoch)`);
  }
}

/** Refuse follower counts that are not one whole, non-negative count per account. */
export function checkFollowerCounts(counts: Float64Array, users: number): void {
  if (!(counts instanceof Float64Array)) throw new StoreInputError('followerCounts must be a Float64Array of counts');
  if (counts.length !== users) throw new StoreInputError(`followerCounts has ${counts.length} entries for ${users} accounts`);
  for (let a = 0; a < users; a++) {
    const n = counts[a];
    if (!Number.isSafeInteger(n) || n < 0) throw new StoreInputError(`followerCounts[${a}] = ${n} is not a whole number of followers`);
  }
}

// ---- binary COPY rows (binary-copy.ts has the framing) ----

/** follows row: (follower_id int8, followee_id int8, created_at timestamptz). */
const FOLLOW_ROW_BYTES = 2 + 3 * (4 + 8);
const FOLLOWER_AT = 2 + 4 + 4; // low word of follower_id
const FOLLOWEE_AT = 2 + 12 + 4 + 4; // low word of followee_id

function followRowTemplate(ts: Buffer): Buffer {
  const t = Buffer.alloc(FOLLOW_ROW_BYTES);
  t.writeInt16BE(3, 0);
  t.writeInt32BE(8, 2);
  t.writeInt32BE(8, 14);
  t.writeInt32BE(8, 26);
  ts.copy(t, 30);
  return t;
}

/** The follows table as binary COPY chunks, in primary-key order (follower, then followee ascending). */
function* followChunks(graph: GraphToLoad, loadedAt: Date, progress: (rows: number) => void): Generator<Buffer> {
  yield COPY_HEADER;
  const template = followRowTemplate(timestampBytes(loadedAt.getTime()));
  const rowsPerChunk = Math.floor(CHUNK_BYTES / FOLLOW_ROW_BYTES);
  const { followeeOffsets, followeeIds } = graph;
  let u = 0;
  let e = 0;
  while (e < graph.edges) {
    const rows = Math.min(rowsPerChunk, graph.edges - e);
    const chunk = Buffer.allocUnsafe(rows * FOLLOW_ROW_BYTES).fill(template);
    for (let at = 0, last = e + rows; e < last; e++, at += FOLLOW_ROW_BYTES) {
      while (followeeOffsets[u + 1] <= e) u++;
      chunk.writeUInt32BE(u, at + FOLLOWER_AT);
      chunk.writeUInt32BE(followeeIds[e], at + FOLLOWEE_AT);
    }
    progress(e);
    yield chunk;
  }
  yield COPY_TRAILER;
}

/** users row: (id, handle, created_at, last_seen_at, follower_count, followee_count). */
function* userChunks(
  graph: GraphToLoad,
  loadedAt: Date,
  lastSeenMs: Float64Array | undefined,
  followerCounts: Float64Array | undefined,
  progress: (rows: number) => void,
): Generator<Buffer> {
  const ts = timestampBytes(loadedAt.getTime());
  const { users, followerOffsets, followeeOffsets } = graph;
  const maxRow = 2 + 12 + 4 + MAX_HANDLE_CHARS * 4 + 12 + 12 + 12 + 12;
  yield* copyRows(
    users,
    maxRow,
    (chunk, at, a) => {
      at = chunk.writeInt16BE(6, at);
      at = writeInt8Field(chunk, at, a);
      const name = graph.names.get(a);
      const handleBytes = name === undefined ? chunk.write(`u${a}`, at + 4, 'latin1') : chunk.write(name, at + 4, 'utf8');
      at = chunk.writeInt32BE(handleBytes, at) + handleBytes;
      at = chunk.writeInt32BE(8, at);
      at += ts.copy(chunk, at);
      at = chunk.writeInt32BE(8, at);
      at = lastSeenMs ? writeTimestamp(chunk, at, lastSeenMs[a]) : at + ts.copy(chunk, at);
      if (followerCounts) {
        at = chunk.writeInt32BE(8, at);
        at = chunk.writeBigInt64BE(BigInt(followerCounts[a]), at);
      } else at = writeInt8Field(chunk, at, followerOffsets[a + 1] - followerOffsets[a]);
      return writeInt8Field(chunk, at, followeeOffsets[a + 1] - followeeOffsets[a]);
    },
    progress,
  );
}

// ---- phases and progress ----

interface Phase {
  name: string;
  /** Expected cost in arbitrary units (about microseconds on a 2-core machine), for the ETA. */
  cost: number;
}

/** Reports progress over weighted phases; a phase without row feedback creeps toward its end by time. */
class PhaseProgress {
  private readonly total: number;
  private doneCost = 0;
  private current?: { phase: Phase; started: number; timer?: NodeJS.Timeout };
  readonly timings: { name: string; seconds: number }[] = [];

  constructor(private readonly phases: Phase[], private readonly report?: (fraction: number, detail: string) => void) {
    this.total = phases.reduce((s, p) => s + p.cost, 0) || 1;
  }

  start(name: string, detail: string, creep: boolean, announce = true): void {
    const phase = this.phases.find((p) => p.name === name);
    if (!phase) throw new Error(`unknown load phase ${name}`);
    this.current = { phase, started: Date.now() };
    if (announce) this.within(0, detail);
    if (creep && this.report) {
      // The expected duration is cost in microseconds; approach the end without reaching it.
      const expectedMs = phase.cost / 1000;
      this.current.timer = setInterval(() => {
        const elapsed = Date.now() - (this.current?.started ?? Date.now());
        this.within(1 - Math.exp(-elapsed / Math.max(1, expectedMs)), detail);
      }, 500);
      this.current.timer.unref();
    }
  }

  within(fraction: number, detail: string): void {
    if (!this.current || !this.report) return;
    this.report(Math.min(1, (this.doneCost + this.current.phase.cost * fraction) / this.total), detail);
  }

  finish(detail: string): void {
    this.report?.(1, detail);
  }

  end(): void {
    if (!this.current) return;
    if (this.current.timer) clearInterval(this.current.timer);
    this.timings.push({ name: this.current.phase.name, seconds: (Date.now() - this.current.started) / 1000 });
    this.doneCost += this.current.phase.cost;
    this.current = undefined;
  }

  stop(): void {
    if (this.current?.timer) clearInterval(this.current.timer);
  }
}

/** Microseconds per follow row of each constraint build, measured on the 2-core development machine. */
const CONSTRAINT_COST: Record<string, number> = {
  follows_pkey: 0.55,
  follows_followee_idx: 0.7,
  follows_follower_fkey: 0.15,
  follows_followee_fkey: 0.38,
};

function loadPhases(users: number, edges: number): Phase[] {
  // Microseconds per row measured with 1M users and 20M follows; only the ratios matter for the ETA.
  return [
    { name: 'prepare', cost: 50_000 },
    { name: 'copy users', cost: users * 2.9 },
    { name: 'copy follows', cost: edges * 0.57 },
    ...FOLLOWS_BULK_CONSTRAINTS.map((c) => ({ name: c.name, cost: edges * (CONSTRAINT_COST[c.name] ?? 0.5) })),
    { name: 'analyze', cost: 300_000 },
    { name: 'commit', cost: 50_000 },
  ];
}

const fmt = (n: number) => n.toLocaleString('en-US');

/**
 * Load the graph into the store's schema (which must be migrated) in one transaction. Throws
 * StoreInputError for a graph the tables would reject, last-seen times that are not one time per
 * account, or non-empty tables without `truncate`; DatabaseUnavailableError when Postgres cannot
 * be used. Either way nothing is changed.
 */
export async function bulkLoadGraph(store: Store, graph: GraphToLoad, opts: BulkLoadOptions = {}): Promise<BulkLoadResult> {
  checkGraphForLoad(graph);
  if (opts.lastSeenMs !== undefined) checkLastSeen(opts.lastSeenMs, graph.users);
  if (opts.followerCounts !== undefined) checkFollowerCounts(opts.followerCounts, graph.users);
  const started = Date.now();
  const loadedAt = opts.loadedAt ?? new Date();
  const progress = new PhaseProgress(loadPhases(graph.users, graph.edges), opts.onProgress);
  const client = await connectClient(store);
  let broken: Error | undefined;
  try {
    // Not announced: a refused load (tables not empty) should print its one line and nothing else.
    progress.start('prepare', 'locking tables', false, false);
    await client.query('BEGIN');
    await client.query(`SELECT set_config('maintenance_work_mem', $1, true)`, [opts.maintenanceWorkMem ?? '1GB']);
    // An interrupted load (Ctrl-C, a killed process) then stops within a second even in the middle
    // of an index build, instead of building on for a client that is gone before rolling back.
    const version = await client.query<{ v: string }>(`SELECT current_setting('server_version_num') AS v`);
    if (Number(version.rows[0].v) >= 140000) await client.query(`SELECT set_config('client_connection_check_interval', '1000', true)`);
    await client.query('LOCK TABLE users, follows, posts, outbox IN ACCESS EXCLUSIVE MODE');
    const exists = await client.query<{ users: boolean; follows: boolean }>(
      'SELECT EXISTS (SELECT 1 FROM users) AS users, EXISTS (SELECT 1 FROM follows) AS follows',
    );
    const held = exists.rows[0];
    if (!opts.truncate && (held.users || held.follows)) {
      const count = await client.query<{ users: string; follows: string }>('SELECT (SELECT count(*) FROM users) AS users, (SELECT count(*) FROM follows) AS follows');
      const c = count.rows[0];
      throw new StoreInputError(
        `schema ${store.schema} at ${store.url} already holds ${fmt(Number(c.users))} users and ${fmt(Number(c.follows))} follows; pass --truncate to replace them`,
      );
    }
    // Truncating in this transaction (a no-op on empty tables) is what allows COPY FREEZE; posts go
    // with their authors and their idempotency keys, and so do their outbox rows and the event log's
    // group records (fanout-ledger.ts) when replacing a graph.
    await client.query(opts.truncate ? 'TRUNCATE follows, posts, post_keys, outbox, event_log_groups, users' : 'TRUNCATE follows, posts, post_keys, users');
    for (const c of [...FOLLOWS_BULK_CONSTRAINTS].reverse()) await client.query(c.drop);
    progress.end();

    progress.start('copy users', `users 0/${fmt(graph.users)}`, false);
    const userRows = await copyIn(
      client,
      'COPY users (id, handle, created_at, last_seen_at, follower_count, followee_count) FROM STDIN (FORMAT binary, FREEZE)',
      userChunks(graph, loadedAt, opts.lastSeenMs, opts.followerCounts, (rows) => progress.within(rows / Math.max(1, graph.users), `users ${fmt(rows)}/${fmt(graph.users)}`)),
    );
    progress.end();

    progress.start('copy follows', `follows 0/${fmt(graph.edges)}`, false);
    const followRows = await copyIn(
      client,
      'COPY follows (follower_id, followee_id, created_at) FROM STDIN (FORMAT binary, FREEZE)',
      followChunks(graph, loadedAt, (rows) => progress.within(rows / Math.max(1, graph.edges), `follows ${fmt(rows)}/${fmt(graph.edges)}`)),
    );
    progress.end();
    if (userRows !== graph.users || followRows !== graph.edges) {
      throw new Error(`COPY stored ${userRows} users and ${followRows} follows, expected ${graph.users} and ${graph.edges}`);
    }

    for (const c of FOLLOWS_BULK_CONSTRAINTS) {
      progress.start(c.name, `building ${c.name}`, true);
      await client.query(c.add);
      progress.end();
    }
    progress.start('analyze', 'analyzing', true);
    await client.query('ANALYZE users, follows');
    progress.end();
    progress.start('commit', 'committing', true);
    await client.query('COMMIT');
    progress.end();
    progress.finish(`${fmt(graph.users)} users, ${fmt(graph.edges)} follows`);
    return { users: userRows, follows: followRows, seconds: (Date.now() - started) / 1000, phases: progress.timings };
  } catch (err) {
    progress.stop();
    const down = unavailable(err, store.url);
    if (down) broken = down;
    else await client.query('ROLLBACK').catch((e: Error) => (broken = e));
    throw down ?? err;
  } finally {
    client.release(broken);
  }
}
