// The measured column of `feedlab compare SCENARIO`: the scenario replayed on this machine's live
// stack `runs` times (`feedlab replay ... --json` as a child process, each run a fresh world from
// the same schedule), or replay documents saved before (--replays). Each run's documents by policy.
import type { RunResult } from '../../sim/result.js';
import { InputError } from '../errors.js';
import { readJsonDocument } from '../json-document.js';
import { formatSeconds, Progress } from '../output.js';
import { runFeedlab } from './child-command.js';

export interface ReplayRuns {
  /** runs[i]: the i-th replay's documents, one per policy replayed. */
  runs: RunResult[][];
  /** How each run is named in the reports (a file, or "replay N"). */
  names: string[];
  /** The documents as JSON text, to be kept beside the report (replay-N.json). */
  texts: string[];
}

/** Result documents of a replay's output: one result, or a sweep's runs. */
function runsOf(doc: unknown, where: string): RunResult[] {
  const d = doc as { schema?: string; runs?: RunResult[] } | null;
  const list: RunResult[] | null = d?.schema === 'feedlab.sweep/1' ? (d.runs ?? []) : d?.schema === 'feedlab.result/1' ? [doc as RunResult] : null;
  if (!list || list.length === 0) throw new InputError(`not a replay's result or sweep document (feedlab.result/1 or feedlab.sweep/1 with runs)`, where);
  const notReplay = list.find((r) => r.source !== 'replay');
  if (notReplay) throw new InputError(`holds a ${notReplay.source} of ${notReplay.policy}, not a replay: the measured side is what feedlab replay measured`, where);
  return list;
}

/** Saved replay documents (--replays a.json,b.json). */
export function readReplays(paths: string[]): ReplayRuns {
  const runs = paths.map((p) => runsOf(readJsonDocument(p).doc, p));
  return { runs, names: paths, texts: [] };
}

export interface ReplayArgs {
  scenarioPath: string;
  policies: string[];
  runs: number;
  /** Flags passed on to every feedlab replay as they are (--users, --time-scale, --workers). */
  pass: string[];
  /** Wall seconds one policy's window takes: for the progress line. */
  windowSeconds: number;
  say: (line: string) => void;
  /** Progress with an ETA on stderr. */
  showProgress: boolean;
}

/** A replay's set-up and settling beside its windows, for the ETA: the world loaded, warmed, checked; the fan-out drained. */
const REPLAY_OVERHEAD_SECONDS = 45;

/**
 * Replay the scenario `runs` times, one after the other (a replay wants the machine to itself);
 * `before(i)` runs before replay i (1-based) and gives flags of that replay's own (compare
 * SCENARIO calibrates there, so each replay has a calibration of the machine as it was just then).
 */
export async function runReplays(o: ReplayArgs, before?: (i: number) => Promise<string[]>): Promise<ReplayRuns> {
  const out: ReplayRuns = { runs: [], names: [], texts: [] };
  for (let i = 1; i <= o.runs; i++) {
    const own = before ? await before(i) : [];
    const args = ['replay', o.scenarioPath, '--policies', o.policies.join(','), '--json', '--quiet', '--no-thresholds', ...o.pass, ...own];
    o.say(`replay ${i} of ${o.runs}: feedlab ${args.join(' ')} (${o.policies.length} x ${formatSeconds(o.windowSeconds)} windows, with loading and settling)`);
    const progress = new Progress(`replay ${i} of ${o.runs}`, o.showProgress);
    const expected = o.policies.length * (o.windowSeconds + REPLAY_OVERHEAD_SECONDS);
    const r = await runFeedlab(args, (s) => progress.update(Math.min(0.99, s / expected), `${formatSeconds(s)} elapsed`));
    let doc: unknown;
    try {
      doc = JSON.parse(r.stdout);
    } catch {
      throw new Error(`feedlab replay (run ${i}) wrote no document: ${r.stderr.trim().split('\n').pop() ?? ''}`);
    }
    out.runs.push(runsOf(doc, `replay run ${i}`));
    out.names.push(`replay ${i}`);
    out.texts.push(r.stdout);
    progress.done();
  }
  return out;
}
