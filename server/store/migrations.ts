// The Postgres schema of the reference server, as ordered migrations. Each migration runs once, in
// its own transaction, recorded in schema_migrations with a checksum of its SQL (see migrate.ts).
// Append new migrations; never edit one that has shipped (the runner refuses a changed checksum).
//
// Names are unqualified: the runner sets search_path to the target schema, so tests can migrate a
// throwaway schema and drop it afterwards.

export interface Migration {
  /** Strictly increasing from 1, without gaps. */
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/**
 * The follows constraints and indexes the bulk loader drops before its COPY and recreates after it
 * (building an index once over sorted input is far cheaper than maintaining it row by row).
 * Migration 1 creates exactly these, so a loaded database and a migrated one are the same schema.
 */
export const FOLLOWS_BULK_CONSTRAINTS: readonly { readonly name: string; readonly add: string; readonly drop: string }[] = [
  {
    name: 'follows_pkey',
    add: 'ALTER TABLE follows ADD CONSTRAINT follows_pkey PRIMARY KEY (follower_id, followee_id)',
    drop: 'ALTER TABLE follows DROP CONSTRAINT IF EXISTS follows_pkey',
  },
  {
    name: 'follows_followee_idx',
    add: 'CREATE INDEX follows_followee_idx ON follows (followee_id, follower_id)',
    drop: 'DROP INDEX IF EXISTS follows_followee_idx',
  },
  {
    name: 'follows_follower_fkey',
    add: 'ALTER TABLE follows ADD CONSTRAINT follows_follower_fkey FOREIGN KEY (follower_id) REFERENCES users (id)',
    drop: 'ALTER TABLE follows DROP CONSTRAINT IF EXISTS follows_follower_fkey',
  },
  {
    name: 'follows_followee_fkey',
    add: 'ALTER TABLE follows ADD CONSTRAINT follows_followee_fkey FOREIGN KEY (followee_id) REFERENCES users (id)',
    drop: 'ALTER TABLE follows DROP CONSTRAINT IF EXISTS follows_followee_fkey',
  },
];

/**
 * The posts constraint and index the post seeder drops before a COPY into an empty posts table and
 * recreates after it (seed-posts.ts). Migration 1 creates the same ones (checked by
 * test/server/store/seed-posts.test.ts), so a seeded database and a migrated one are the same schema.
 */
export const POSTS_BULK_CONSTRAINTS: readonly { readonly name: string; readonly add: string; readonly drop: string }[] = [
  {
    name: 'posts_author_fkey',
    add: 'ALTER TABLE posts ADD CONSTRAINT posts_author_fkey FOREIGN KEY (author_id) REFERENCES users (id)',
    drop: 'ALTER TABLE posts DROP CONSTRAINT IF EXISTS posts_author_fkey',
  },
  {
    name: 'posts_author_created_idx',
    add: 'CREATE INDEX posts_author_created_idx ON posts (author_id, created_at DESC, id DESC)',
    drop: 'DROP INDEX IF EXISTS posts_author_created_idx',
  },
];

/** Longest post body, in characters (Unicode code points, as Postgres char_length counts them). */
export const POST_BODY_MAX_CHARS = 280;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial',
    sql: `
CREATE TABLE users (
  id              bigint      PRIMARY KEY,
  handle          text        NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  last_seen_at    timestamptz NOT NULL DEFAULT now(),
  follower_count  bigint      NOT NULL DEFAULT 0,
  followee_count  bigint      NOT NULL DEFAULT 0,
  CONSTRAINT users_handle_key UNIQUE (handle),
  CONSTRAINT users_handle_length CHECK (char_length(handle) BETWEEN 1 AND 64),
  CONSTRAINT users_counts_nonnegative CHECK (follower_count >= 0 AND followee_count >= 0)
);

-- An edge "follower follows followee". The primary key serves "whom does u follow"; the second
-- index serves "who follows a" (the fan-out direction).
CREATE TABLE follows (
  follower_id  bigint      NOT NULL,
  followee_id  bigint      NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT follows_no_self_follow CHECK (follower_id <> followee_id)
);
${FOLLOWS_BULK_CONSTRAINTS.map((c) => c.add + ';').join('\n')}

-- Ids are 64-bit and time-sortable (made by the server, not by a sequence); JSON carries them as strings.
CREATE TABLE posts (
  id          bigint      PRIMARY KEY,
  author_id   bigint      NOT NULL,
  body        text        NOT NULL,
  created_at  timestamptz NOT NULL,
  deleted_at  timestamptz,
  CONSTRAINT posts_author_fkey FOREIGN KEY (author_id) REFERENCES users (id),
  CONSTRAINT posts_body_length CHECK (char_length(body) BETWEEN 1 AND ${POST_BODY_MAX_CHARS})
);
CREATE INDEX posts_author_created_idx ON posts (author_id, created_at DESC, id DESC);

-- The transactional outbox: written in the transaction that writes the post, moved to the event
-- log by the relay, which sets published_at.
CREATE TABLE outbox (
  id            bigserial   PRIMARY KEY,
  post_id       bigint      NOT NULL,
  author_id     bigint      NOT NULL,
  kind          text        NOT NULL,
  payload       jsonb       NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  published_at  timestamptz,
  CONSTRAINT outbox_kind CHECK (kind IN ('PostCreated', 'PostDeleted'))
);
CREATE INDEX outbox_unpublished_idx ON outbox (id) WHERE published_at IS NULL;
`,
  },
  {
    version: 2,
    name: 'outbox claim lease',
    // Several relays share the outbox: a claim leases rows to one relay (claimed_by) until
    // claimed_until, so no two relays hold the same row, and a dead relay's rows come back when its
    // lease runs out (see outbox.ts).
    sql: `
ALTER TABLE outbox
  ADD COLUMN claimed_by    text,
  ADD COLUMN claimed_until timestamptz;
`,
  },
  {
    version: 3,
    name: 'fan-out completion and event log groups',
    // The outbox stays the source of truth when the event log loses its entries (fanout-ledger.ts):
    // a worker marks each event's row once its fan-out is done (fanned_out_at), and the consumer
    // groups a worker has created are recorded, so that a group found missing again means the log
    // was lost and the rows published but not fanned out are published again. Rows published
    // before this migration count as fanned out.
    sql: `
ALTER TABLE outbox ADD COLUMN fanned_out_at timestamptz;
UPDATE outbox SET fanned_out_at = published_at WHERE published_at IS NOT NULL;
CREATE INDEX outbox_unfinished_idx ON outbox (id) WHERE published_at IS NOT NULL AND fanned_out_at IS NULL;
CREATE TABLE event_log_groups (
  stream_prefix text        NOT NULL,
  group_name    text        NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  losses        integer     NOT NULL DEFAULT 0,
  PRIMARY KEY (stream_prefix, group_name)
);
`,
  },
  {
    version: 4,
    name: 'idempotency keys of posts',
    // POST /v1/posts with an Idempotency-Key: the key is written in the post's own statement, so a
    // retry with the same key finds the first post (or, if the first never committed, makes it).
    // Keys are per author: another user's key is another key.
    sql: `
CREATE TABLE post_keys (
  author_id   bigint      NOT NULL,
  key         text        NOT NULL,
  post_id     bigint      NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (author_id, key)
);
`,
  },
];
