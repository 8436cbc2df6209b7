// A stand-in for the feed API that answers at once, run as a child process by bench/replay.ts: the
// replay driver is measured against it at the same rates as against the real server, so that what
// the driver itself keeps up with is told apart from what the server does. GET /v1/feed answers a
// 20-post page with a cursor, POST /v1/posts a 201 with an id, as the real routes do.
import { createServer } from 'node:http';

const post = (i: number) => ({ id: String(7_000_000_000_000_000_000n + BigInt(i)), authorId: i, text: 'x'.repeat(120), createdAt: 1_764_000_000_000 + i });
const page = Buffer.from(JSON.stringify({ posts: Array.from({ length: 20 }, (_, i) => post(i)), nextCursor: 'c1' }));
let seq = 0;

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    if (req.method === 'POST') {
      const body = Buffer.from(JSON.stringify({ id: String(8_000_000_000_000_000_000n + BigInt(seq)), authorId: 1, createdAt: Date.now() }));
      seq++;
      res.writeHead(201, { 'content-type': 'application/json', 'content-length': body.length });
      res.end(body);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': page.length });
    res.end(page);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const a = server.address();
  process.stdout.write(`listening ${typeof a === 'object' && a ? a.port : 0}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
