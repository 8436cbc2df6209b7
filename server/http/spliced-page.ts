// A feed page answered without serializing its posts again: each post's body as the cache held it
// (`{"authorId":…,"text":…,"createdAt":…}`, server/feed/hydration.ts readCachedBody) spliced after
// its id, which is byte for byte what the route's response serializer writes for the same page
// (test/server/http/spliced-page.test.ts). Parsing the cached bodies and serializing them again
// were 8.7% of the server's main thread (about a tenth of its busy time) in the server benchmark's
// closed loop under --cpu-prof (2026-12-07).
import type { PostView } from './service.js';

export const JSON_UTF8 = 'application/json; charset=utf-8';

/** The page's JSON with each post's cached body spliced after its id, or null when a post has none. */
export function splicedPage(posts: readonly PostView[], nextCursor: string | null): string | null {
  let out = '{"posts":[';
  for (let i = 0; i < posts.length; i++) {
    const cached = posts[i].cachedJson;
    if (cached === undefined) return null;
    out += (i === 0 ? '{"id":' : ',{"id":') + JSON.stringify(posts[i].id) + ',' + cached.slice(1);
  }
  return out + '],"nextCursor":' + (nextCursor === null ? 'null' : JSON.stringify(nextCursor)) + '}';
}
