// The cache connection: bounded connects that fail in one redacted line, and the key space every
// server key goes through. The last block needs this machine's Redis (REDIS_URL); without it it is
// skipped with one loud line, except under CI=true where it fails.
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { keySlot, timelineKey } from '../../../core/keys.js';
import {
  CacheConfigError,
  closeRedis,
  connectRedis,
  derivedKey,
  dropKeyspace,
  InfrastructureError,
  keyspace,
  redactRedisUrl,
  redisUrlFromEnv,
} from '../../../server/cache/redis.js';
import { LuaScript } from '../../../server/cache/lua.js';
import { CI, REDIS_URL, redisUnreachable } from './reachable.js';

const unreachable = await redisUnreachable('part of test/server/cache/redis.test.ts');

async function rejection(p: Promise<unknown>): Promise<Error> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e as Error,
  );
}

describe('connectRedis without a Redis', () => {
  it('fails fast with one InfrastructureError line, password redacted', async () => {
    // A port nobody listens on: take a free one and close it.
    const server = createServer().listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as AddressInfo).port;
    await new Promise((resolve) => server.close(resolve));
    const started = Date.now();
    const err = await rejection(connectRedis({ url: `redis://:s3cret@127.0.0.1:${port}`, connectTimeoutMs: 1_000 }));
    expect(err).toBeInstanceOf(InfrastructureError);
    expect(err.message).toContain(`127.0.0.1:${port}`);
    expect(err.message).toContain('***');
    expect(err.message).not.toContain('s3cret');
    expect(err.message).not.toContain('\n');
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('bounds the handshake with a peer that accepts and never answers', async () => {
    const silent = createServer(() => {}).listen(0, '127.0.0.1');
    await once(silent, 'listening');
    try {
      const url = `redis://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      const started = Date.now();
      const err = await rejection(connectRedis({ url, connectTimeoutMs: 300 }));
      expect(err).toBeInstanceOf(InfrastructureError);
      expect(err.message).toContain('no answer within 300 ms');
      expect(Date.now() - started).toBeLessThan(1_500);
    } finally {
      silent.close();
    }
  });

  it('refuses a malformed URL as a configuration error', async () => {
    expect(await rejection(connectRedis({ url: 'not a url' }))).toBeInstanceOf(CacheConfigError);
    const err = await rejection(connectRedis({ url: 'http://user:pw@host:1' }));
    expect(err).toBeInstanceOf(CacheConfigError);
    expect(err.message).not.toContain(':pw@');
  });

  it('redacts passwords and reads REDIS_URL', () => {
    expect(redactRedisUrl('redis://u:p4ss@h:1/0')).toBe('redis://u:***@h:1/0');
    expect(redactRedisUrl('redis://h:1')).toBe('redis://h:1');
    expect(redisUrlFromEnv({ REDIS_URL: ' redis://x:2 ' })).toBe('redis://x:2');
    expect(redisUrlFromEnv({})).toBe('redis://127.0.0.1:6379');
  });
});

describe('keyspace', () => {
  it('prefixes every key, keeping the user hash tag (and so the cluster slot)', () => {
    const ks = keyspace('feedlab:test-1:');
    const key = ks.key(timelineKey(42));
    expect(key).toBe('feedlab:test-1:feed:{u:42}:home');
    expect(keySlot(key)).toBe(keySlot(timelineKey(42)));
    expect(keySlot(derivedKey(key, 'pending'))).toBe(keySlot(key));
    expect(keyspace().key('x')).toBe('x');
  });

  it('refuses prefixes with braces, spaces or glob characters', () => {
    for (const bad of ['{x}:', 'a b', 'a*', 'a?', 'a[b]', 'x'.repeat(101)]) {
      expect(() => keyspace(bad), bad).toThrow(CacheConfigError);
    }
  });
});

describe.skipIf(unreachable !== null && !CI)('on this machine\'s Redis', () => {
  it('drops exactly the keys under its prefix, and refuses the empty prefix', async () => {
    const redis = await connectRedis({ url: REDIS_URL });
    try {
      const mine = keyspace(`feedlab:test:${process.pid}-${randomUUID().slice(0, 8)}:redis:`);
      const other = keyspace(`${mine.prefix}x`.replace(/:redis:x$/, ':redis-other:'));
      await redis.set(mine.key('a'), '1', 'PX', 60_000);
      await redis.set(mine.key('b'), '1', 'PX', 60_000);
      await redis.set(other.key('a'), '1', 'PX', 60_000);
      expect(await dropKeyspace(redis, mine)).toBe(2);
      expect(await redis.exists(mine.key('a'), mine.key('b'))).toBe(0);
      expect(await redis.exists(other.key('a'))).toBe(1);
      expect(await dropKeyspace(redis, other)).toBe(1);
      await expect(dropKeyspace(redis, keyspace(''))).rejects.toThrow(CacheConfigError);
    } finally {
      await closeRedis(redis);
    }
  });
});

describe.skipIf(unreachable !== null && !CI)('Lua scripts on this machine\'s Redis', () => {
  it('reloads a script Redis has lost (NOSCRIPT) and runs the failed calls again', async () => {
    const redis = await connectRedis({ url: REDIS_URL });
    try {
      const ks = keyspace(`feedlab:test:${process.pid}-${randomUUID().slice(0, 8)}:lua:`);
      // A source no other run has loaded, so Redis cannot know its sha yet.
      const script = new LuaScript('incr-test', `-- ${randomUUID()}\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])`);
      expect(await redis.script('EXISTS', script.sha)).toEqual([0]);
      // Pretend it was loaded on this connection (as after a Redis restart).
      (script as unknown as { loaded: WeakSet<object> }).loaded.add(redis);
      const replies = await script.runMany(redis, [
        { keys: [ks.key('n')], args: [2] },
        { keys: [ks.key('n')], args: [3] },
      ]);
      expect(replies).toEqual([
        [null, 2],
        [null, 5],
      ]);
      expect(await script.run(redis, [ks.key('n')], [1])).toBe(6);
      expect(await dropKeyspace(redis, ks)).toBe(1);
    } finally {
      await closeRedis(redis);
    }
  });
});
