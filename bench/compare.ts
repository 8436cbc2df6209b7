// npm run bench (compare): the fidelity goal of issue 11 measured. For each shipped replay scenario,
// `feedlab compare SCENARIO` as a user runs it (a child process): this machine calibrated just
// before each of the two replays on the live stack (its costs drift within the hour: each
// calibration is one draw of them), the replayed world simulated with each calibration's costs over
// three seeds, the estimate beside them. Printed: the compare report, then every figure's ratio
// against the 15% goal, and where the CPU went during the replays; then, per policy, the counts of the
// report's stages column (the same simulations with each replay's own stages, what --replay-stages
// prints whole). About 60 minutes (four calibrations and four replays).
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AGREEMENT, type CompareDocument, type Gap } from '../sim/compare/compare.js';
import type { RunResult } from '../sim/result.js';
import { formatCpu } from '../sim/replay/cpu.js';
import { runCli } from './harness.js';
import { gapWords } from '../reports/compare.js';

const SCENARIOS = ['scenarios/celebrity-burst.yaml', 'scenarios/threshold-sweep.yaml'];
const TIMEOUT_MS = 60 * 60_000;

/** `feedlab ARGS`, its progress shown as it comes. */
const feedlab = (args: string[]) => runCli(args, { timeoutMs: TIMEOUT_MS, inheritStderr: true });

export async function benchCompare(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'feedlab-bench-compare-'));
  const results: string[] = [];
  try {
    for (const scenario of SCENARIOS) {
      const out = join(dir, scenario.replace(/\W+/g, '-'));
      const args = ['compare', scenario, '--out', out];
      console.log(`\n\`node dist/cli/main.js ${args.join(' ')}\` (a calibration and a replay of every policy, twice; three simulations of each calibration):`);
      const r = await feedlab(args);
      process.stdout.write(r.stdout);
      let doc: CompareDocument;
      try {
        doc = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as CompareDocument;
      } catch {
        results.push(`compare ${scenario}: FAILED (exit ${r.code}) after ${r.seconds.toFixed(0)} s`);
        continue;
      }
      cpuLines(out);
      results.push(...resultLines(scenario, doc, r.seconds));
      results.push(...stagesLines(scenario, doc));
    }
  } finally {
    // kept: each comparison (report.json, .md, .html) and the replays' documents, for feedlab compare --replays
    console.log(`\nthe calibrations, the comparisons and the replays' documents are in ${dir}`);
  }
  console.log('summary:');
  for (const line of results) console.log(`  RESULT ${line}`);
}

/**
 * Per policy, the report's stages column counted as the verdicts are: which figures the model adds up
 * to from what the replays measured, and which it does not (`--replay-stages` prints them whole).
 */
export function stagesLines(scenario: string, doc: CompareDocument): string[] {
  return doc.policies.flatMap((p) => {
    const judged = doc.figures.flatMap((f) => (f.policy === p.policy && f.replayStages && f.replayStages.verdict !== 'n/a' ? [{ id: f.id, ...f.replayStages }] : []));
    return judged.length === 0 ? [] : [verdictLine(`${scenario} ${p.policy} (the replays' stages)`, judged, doc.measurement.contended)];
  });
}

/** Where the two cores went during each replay's window, policy by policy. */
function cpuLines(out: string): void {
  for (let i = 1; ; i++) {
    let text: string;
    try {
      text = readFileSync(join(out, `replay-${i}.json`), 'utf8');
    } catch {
      return;
    }
    const doc = JSON.parse(text) as RunResult | { runs: RunResult[] };
    const runs = 'runs' in doc ? doc.runs : [doc];
    for (const r of runs) {
      const c = r.replay?.cpu;
      if (c?.share) console.log(`  replay ${i}, ${r.policy}: ${formatCpu(c.share, 'driver')}${c.contended ? ' !!! CONTENDED' : ''}`);
    }
  }
}

/** One RESULT line per policy: how many figures are within 15%, inside the noise, outside; and the ones outside, with whose gap. */
function resultLines(scenario: string, doc: CompareDocument, seconds: number): string[] {
  const lines = doc.policies.map((p) => verdictLine(`${scenario} ${p.policy}`, doc.figures.filter((f) => f.policy === p.policy && f.verdict !== 'n/a'), doc.measurement.contended));
  lines.push(`compare ${scenario}: ${seconds.toFixed(0)} s in all`);
  return lines;
}

/** One policy's judged figures in a line: the counts of each verdict, and the ones outside with their ratio (and whose gap, where said). */
function verdictLine(what: string, figs: readonly { id: string; verdict: string; ratio: number | null; gap?: Gap }[], contended: boolean): string {
  const count = (v: string) => figs.filter((f) => f.verdict === v).length;
  const outside = figs.filter((f) => f.verdict === 'outside').map((f) => `${f.id} ${f.ratio === null ? 'no ratio' : f.ratio.toFixed(2)}${f.gap ? ` ${gapWords(f.gap)}` : ''}`);
  return (
    `compare ${what}: ${count('within')} of ${figs.length} figures within ${AGREEMENT * 100}%, ${count('noise')} inside the noise, ${count('outside')} outside` +
    `${outside.length > 0 ? ` (${outside.join(', ')})` : ''}${contended ? ' !!! measured while CONTENDED' : ''}`
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await benchCompare();
