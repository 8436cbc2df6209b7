// The event queue against an object heap of {time, seq} entries, side by side in one process
// (ANCHORS section 6: a flat typed-array heap ran 4.4-4.6M hold operations/s at 100k pending).
import { EventQueue } from '../sim/engine/event-queue.js';
import { Rng } from '../core/random.js';

interface Entry {
  time: number;
  seq: number;
  kind: number;
}

class ObjectHeap {
  private items: Entry[] = [];
  private seq = 0;
  push(time: number, kind: number): void {
    const e = { time, seq: this.seq++, kind };
    const a = this.items;
    a.push(e);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p].time < e.time || (a[p].time === e.time && a[p].seq < e.seq)) break;
      a[i] = a[p];
      i = p;
    }
    a[i] = e;
  }
  pop(): Entry | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= a.length) break;
        const r = l + 1;
        const c = r < a.length && (a[r].time < a[l].time || (a[r].time === a[l].time && a[r].seq < a[l].seq)) ? r : l;
        if (a[c].time < last.time || (a[c].time === last.time && a[c].seq < last.seq)) {
          a[i] = a[c];
          i = c;
        } else break;
      }
      a[i] = last;
    }
    return top;
  }
}

/** The classic hold model: pop the earliest event, push one a random exponential delay later. */
function holdFlat(pending: number, ops: number): number {
  const rng = new Rng(1);
  const q = new EventQueue(pending);
  for (let i = 0; i < pending; i++) q.push(rng.exponential(1), 0);
  const t0 = performance.now();
  for (let i = 0; i < ops; i++) {
    q.pop();
    q.push(q.now + rng.exponential(1), 0);
  }
  return ops / ((performance.now() - t0) / 1000);
}

function holdObject(pending: number, ops: number): number {
  const rng = new Rng(1);
  const q = new ObjectHeap();
  for (let i = 0; i < pending; i++) q.push(rng.exponential(1), 0);
  const t0 = performance.now();
  for (let i = 0; i < ops; i++) {
    const e = q.pop()!;
    q.push(e.time + rng.exponential(1), 0);
  }
  return ops / ((performance.now() - t0) / 1000);
}

const ANCHOR_FLAT = new Map([
  [1_000, 7.7e6],
  [100_000, 4.4e6],
  [1_000_000, 0.9e6],
]);

export async function benchEngine(): Promise<void> {
  console.log('event queue (hold model: pop + push), M operations/s');
  for (const pending of [1_000, 100_000, 1_000_000]) {
    const ops = 2_000_000;
    const flat = holdFlat(pending, ops);
    const object = holdObject(pending, ops);
    const anchor = ANCHOR_FLAT.get(pending)!;
    console.log(
      `  ${String(pending).padStart(9)} pending: feedlab ${(flat / 1e6).toFixed(2)}M/s, object heap ${(object / 1e6).toFixed(2)}M/s, ` +
        `ratio ${(flat / object).toFixed(2)}x; vs ANCHORS flat heap ${(anchor / 1e6).toFixed(1)}M/s: ${(flat / anchor).toFixed(2)}x`,
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchEngine();
