// The graph and the population moved into SharedArrayBuffers once, so every worker thread of a
// parallel sweep reads the same copy: a structured clone of a typed array over a SharedArrayBuffer
// shares its memory instead of copying it (a 1M-user, 20M-follow graph is 168 MB of ids and offsets).
import type { FollowerGraph } from '../graph/graph.js';
import type { Population } from '../model/population.js';
import type { PreparedScenario } from '../run-scenario.js';

type TypedArray = Uint8Array | Uint16Array | Int32Array | Uint32Array | Float64Array;

function isTyped(v: unknown): v is TypedArray {
  return ArrayBuffer.isView(v) && !(v instanceof DataView);
}

/** A new zeroed Uint32Array over a SharedArrayBuffer. */
export function sharedUint32(length: number): Uint32Array {
  return new Uint32Array(new SharedArrayBuffer(4 * length));
}

/** The array itself when it is shared already, else a copy over a SharedArrayBuffer. */
export function sharedArray<T extends TypedArray>(a: T): T {
  if (a.buffer instanceof SharedArrayBuffer) return a;
  const Kind = a.constructor as new (buffer: SharedArrayBuffer) => T;
  const out = new Kind(new SharedArrayBuffer(a.byteLength));
  out.set(a as never);
  return out;
}

/** A copy of `o` whose typed-array fields are shared (other fields as they are). */
export function withSharedArrays<T extends object>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) out[k] = isTyped(v) ? sharedArray(v) : v;
  return out as T;
}

/** The graph with its ids and offsets in shared memory. */
export function sharedGraph(g: FollowerGraph): FollowerGraph {
  return withSharedArrays(g);
}

/** The prepared scenario with its graph and population in shared memory (the population's graph is the same one). */
export function sharedPrepared(p: PreparedScenario): PreparedScenario {
  const graph = sharedGraph(p.graph);
  const population: Population = { ...withSharedArrays(p.population), graph };
  return { ...p, graph, population };
}
