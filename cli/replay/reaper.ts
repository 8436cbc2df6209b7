// The replay's watchdog: a small detached process that outlives the driver. The driver holds a pipe to
// its stdin and tells it, one JSON line at a time, which processes it started and which scratch
// space it made. When the driver ends normally it says {"done":true} and the watchdog exits doing
// nothing. When the pipe closes without that (the driver crashed, was killed with SIGKILL, or its
// terminal went away), the watchdog stops every process it was told about and removes the scratch
// space, so a replay never leaves a server, a worker, a schema or a key behind.
//
// Started as `node dist/cli/replay/reaper.js` by processes.ts's Watchdog; not a feedlab command.
import { appendFileSync } from 'node:fs';
import { dropScratch, type Scratch } from './scratch.js';

interface Message {
  scratch?: Scratch | null;
  pids?: number[];
  log?: string;
  done?: boolean;
}

let scratch: Scratch | null = null;
let pids: number[] = [];
let logFile: string | null = null;
let done = false;
let buffer = '';

const note = (line: string) => {
  if (logFile) {
    try {
      appendFileSync(logFile, `${new Date().toISOString()} feedlab replay watchdog: ${line}\n`);
    } catch {
      // nowhere to say it
    }
  }
};

// The terminal's Ctrl-C and hang-up are the driver's to handle; the watchdog waits for the pipe.
for (const signal of ['SIGINT', 'SIGHUP', 'SIGTERM'] as const) process.on(signal, () => {});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Signal a process's group (the driver starts each service as a group leader), else the process. */
function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    try {
      process.kill(pid, sig);
    } catch {
      // gone
    }
  }
}

async function reap(): Promise<void> {
  const left = pids.filter(alive);
  if (left.length > 0) note(`the driver is gone; stopping ${left.join(', ')}`);
  for (const pid of left) signal(pid, 'SIGTERM');
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline && pids.some(alive)) await new Promise((r) => setTimeout(r, 100));
  for (const pid of pids.filter(alive)) signal(pid, 'SIGKILL');
  if (scratch) {
    try {
      const { keys } = await dropScratch(scratch);
      note(`removed schema ${scratch.schema} and ${keys} keys under ${scratch.keyPrefix}`);
    } catch (err) {
      note((err as Error).message);
    }
  }
}

process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk: string) => {
  buffer += chunk;
  for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
    const line = buffer.slice(0, nl);
    buffer = buffer.slice(nl + 1);
    let m: Message;
    try {
      m = JSON.parse(line) as Message;
    } catch {
      continue;
    }
    if (m.log !== undefined) logFile = m.log;
    if (m.scratch !== undefined) scratch = m.scratch;
    if (m.pids) pids = m.pids;
    if (m.done) done = true;
  }
});
let ended = false;
const onEnd = () => {
  if (ended) return;
  ended = true;
  if (done) process.exit(0);
  void reap().finally(() => process.exit(0));
};
process.stdin.on('end', onEnd);
process.stdin.on('close', onEnd);
process.stdin.on('error', onEnd);
