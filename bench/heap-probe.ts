// The live heap of a running Node process after a full collection, through its inspector: SIGUSR1
// opens it (on 127.0.0.1:9229, which Node does on that signal), HeapProfiler.collectGarbage runs a
// full GC, process.memoryUsage() is read, and the inspector is closed again so the next process can
// open the same port. The soak uses it because a process's RSS between collections is mostly
// garbage not yet collected: the heap after a full GC is what a leak would grow.
import WebSocket from 'ws';

const INSPECTOR = 'http://127.0.0.1:9229/json/list';
const OPEN_WAIT_MS = 5_000;

export interface HeapAfterGc {
  /** Bytes before and after the collection. */
  rssBefore: number;
  heapUsedBefore: number;
  rss: number;
  heapUsed: number;
  heapTotal: number;
}

async function debuggerUrl(): Promise<string> {
  const end = Date.now() + OPEN_WAIT_MS;
  for (;;) {
    try {
      const list = (await (await fetch(INSPECTOR)).json()) as { webSocketDebuggerUrl: string }[];
      if (list[0]?.webSocketDebuggerUrl) return list[0].webSocketDebuggerUrl;
    } catch {
      // not open yet
    }
    if (Date.now() > end) throw new Error(`no inspector on ${INSPECTOR} within ${OPEN_WAIT_MS} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Collects the process's garbage and reads its memory; throws when its inspector cannot be opened. */
export async function heapAfterGc(pid: number): Promise<HeapAfterGc> {
  process.kill(pid, 'SIGUSR1');
  const ws = new WebSocket(await debuggerUrl());
  await new Promise<void>((resolve, reject) => ws.once('open', () => resolve()).once('error', reject));
  let id = 0;
  const call = (method: string, params: object = {}) =>
    new Promise<{ result?: { value?: string } }>((resolve) => {
      const mine = ++id;
      const on = (data: WebSocket.RawData) => {
        const m = JSON.parse(data.toString()) as { id?: number; result?: { result?: { value?: string } } };
        if (m.id !== mine) return;
        ws.off('message', on);
        resolve(m.result ?? {});
      };
      ws.on('message', on);
      ws.send(JSON.stringify({ id: mine, method, params }));
    });
  const usage = async () => JSON.parse((await call('Runtime.evaluate', { expression: 'JSON.stringify(process.memoryUsage())' })).result?.value ?? '{}') as NodeJS.MemoryUsage;
  try {
    const before = await usage();
    await call('HeapProfiler.collectGarbage');
    const after = await usage();
    return { rssBefore: before.rss, heapUsedBefore: before.heapUsed, rss: after.rss, heapUsed: after.heapUsed, heapTotal: after.heapTotal };
  } finally {
    // the port is free again for the next process (the console's require closes it from inside;
    // its answer may never come: the socket goes with it)
    const closed = new Promise((r) => ws.once('close', r));
    void call('Runtime.evaluate', { expression: "require('node:inspector').close()", includeCommandLineAPI: true });
    await Promise.race([closed, new Promise((r) => setTimeout(r, 1_000))]);
    ws.close();
  }
}
