// A feed page answered from the cached bodies without a parse (server/feed/hydration.ts
// readCachedBody, server/http/spliced-page.ts): the same verdicts as parsing, and the same bytes as
// the route's response serializer, whatever the text holds.
import fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { makePostId } from '../../../core/post-id.js';
import { decodeBody, readCachedBody, TOMBSTONE } from '../../../server/feed/hydration.js';
import { feedPageResponse } from '../../../server/http/app.js';
import type { PostView } from '../../../server/http/service.js';
import { splicedPage } from '../../../server/http/spliced-page.js';

const T0 = Date.UTC(2026, 11, 7);
const TEXTS = [
  'hello',
  'a "quoted" word and a back\\slash',
  'line one\nline two\ttabbed',
  'control \u0001 and \u001f',
  'emoji 🎉 and ✓, CJK 漢字',
  'separators \u2028 \u2029',
  '</script><!-- -->',
  'x'.repeat(280),
];

/** The body as remember() caches it. */
const cachedText = (authorId: number, text: string, createdAt: number) => JSON.stringify({ authorId, text, createdAt });

/** What the route's response serializer writes for a page (the schema's fast-json-stringify). */
async function serialized(posts: PostView[], nextCursor: string | null): Promise<string> {
  const app = fastify();
  app.get('/', { schema: { response: { 200: feedPageResponse } } }, async () => ({ posts, nextCursor }));
  const res = await app.inject({ method: 'GET', url: '/' });
  await app.close();
  return res.body;
}

describe('a feed page spliced from the cached bodies', () => {
  it('reads a cached post without a parse, to the same verdict as parsing it', () => {
    TEXTS.forEach((text, i) => {
      const id = makePostId(T0 + i, 1, i);
      const cached = cachedText(40 + i, text, T0 + i);
      const view = readCachedBody(id, cached);
      expect(view, text).toEqual({ id, authorId: 40 + i, text, createdAt: T0 + i, cachedJson: cached });
      expect({ ...view, cachedJson: undefined }).toEqual({ ...decodeBody(id, JSON.parse(cached)), cachedJson: undefined });
    });
  });

  it('parses what is not in the cached form, and refuses what is not a post', () => {
    const id = makePostId(T0, 1, 1);
    expect(readCachedBody(id, JSON.stringify(TOMBSTONE))).toBeNull();
    // another key order or spacing: parsed, and answered through the serializer (no cached JSON)
    expect(readCachedBody(id, '{"text":"hi","authorId":3,"createdAt":5}')).toEqual({ id, authorId: 3, text: 'hi', createdAt: 5 });
    expect(readCachedBody(id, '{"authorId": 3, "text": "hi", "createdAt": 5}')).toEqual({ id, authorId: 3, text: 'hi', createdAt: 5 });
    // escapes JSON.stringify never writes, and -0: the same values, parsed (spliced they would not be the serializer's bytes)
    for (const other of ['{"authorId":3,"text":"a\\/b","createdAt":5}', '{"authorId":3,"text":"\\u0041","createdAt":5}', '{"authorId":3,"text":"\\u00E9","createdAt":5}', '{"authorId":3,"text":"hi","createdAt":-0}', '{"authorId":3,"text":"a\\u000ab","createdAt":5}', '{"authorId":3,"text":"\\ud83d\\ude00","createdAt":5}']) {
      expect(readCachedBody(id, other), other).not.toHaveProperty('cachedJson');
      expect(readCachedBody(id, other), other).toEqual(decodeBody(id, JSON.parse(other)));
    }
    // not JSON, leading zeros, an empty text, ids past 2^53, a truncated value
    for (const bad of ['nope', '{"authorId":03,"text":"hi","createdAt":5}', '{"authorId":3,"text":"","createdAt":5}', '{"authorId":9007199254740993,"text":"hi","createdAt":5}', '{"authorId":3,"text":"hi","createdAt":5', '{"authorId":-3,"text":"hi","createdAt":5}']) {
      expect(readCachedBody(id, bad), bad).toBeUndefined();
    }
  });

  it('writes the same bytes as the response serializer, with or without a next cursor', async () => {
    const posts = TEXTS.map((text, i) => readCachedBody(makePostId(T0 + i, 2, i), cachedText(7 * i, text, T0 + i)) as PostView);
    for (const cursor of [null, 'AQAAAZrzq1xAFkmyJqeAAAB4dQ2k1pZ0yQF7wQ3Pqw']) {
      const spliced = splicedPage(posts, cursor);
      expect(spliced).toBe(await serialized(posts, cursor));
      expect(JSON.parse(spliced!)).toEqual({ posts: posts.map(({ cachedJson: _, ...p }) => p), nextCursor: cursor });
    }
    expect(splicedPage([], null)).toBe(await serialized([], null));
  });

  it('leaves a page with any post not from the cache to the serializer', () => {
    const cached = readCachedBody(makePostId(T0, 1, 1), cachedText(1, 'hi', T0)) as PostView;
    const fromPostgres: PostView = { id: makePostId(T0 + 1, 1, 2), authorId: 2, text: 'there', createdAt: T0 + 1 };
    expect(splicedPage([cached, fromPostgres], null)).toBeNull();
    expect(splicedPage([cached], null)).not.toBeNull();
  });
});
