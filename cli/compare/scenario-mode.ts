// `feedlab compare SCENARIO`: the three answers to one scenario, side by side. On this machine:
//  1. a calibration (the scenario's own, --calibration, or `feedlab calibrate` run first);
//  2. the replay: `feedlab replay` of the scenario, `runs` times (or saved documents, --replays);
//  3. the simulation of the very world the replay ran (sim/replay/mirror.ts), with the calibrated
//     costs and the replay's own schedule, `seeds` times (the model's own draws: hops, spreads, waits);
//  4. the estimate: the documents' closed forms with that world's inputs (estimate-side.ts);
// then sim/compare's document, figure by figure and policy by policy.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatPolicy, notLiveRunnable, type FanoutPolicy } from '../../core/fanout-policy.js';
import { buildComparison, type CompareDocument, type PolicyInput } from '../../sim/compare/compare.js';
import { replayMapping } from '../../sim/replay/mapping.js';
import { mirrorScenario, replayKeyPrefix, simulateMirror } from '../../sim/replay/mirror.js';
import type { RunResult } from '../../sim/result.js';
import { policyFor } from '../../sim/run-scenario.js';
import { numberFlag } from '../args.js';
import { expectedSeconds } from '../calibrate/progress.js';
import { CALIBRATE } from '../calibrate/settings.js';
import { InputError } from '../errors.js';
import { Progress } from '../output.js';
import { asInputError, readScenario } from '../prepare-scenario.js';
import { buildWorld } from '../replay/world.js';
import { runFeedlab } from './child-command.js';
import { estimateSide } from './estimate-side.js';
import { calibrationChecks } from './calibration-checks.js';
import { figureNotes } from './notes.js';
import { readReplays, runReplays, type ReplayRuns } from './replay-side.js';
import { DEFAULT_RUNS, DEFAULT_SEEDS, type COMPARE_SCENARIO_OPTIONS } from '../spec/live.js';
import type { Values } from '../spec/options.js';

export type ScenarioModeFlags = Values<typeof COMPARE_SCENARIO_OPTIONS>;

/** About how long feedlab calibrate takes at its default samples, for the ETA: its own steps' expected seconds. */
const CALIBRATE_SECONDS = Object.values(expectedSeconds(CALIBRATE.samples, true)).reduce((a, b) => a + b, 0);

export interface ScenarioComparison {
  doc: CompareDocument;
  /** Files kept beside the report with --out: each replay's document, the calibration used. */
  files: Record<string, string>;
}

export async function compareScenario(path: string, f: ScenarioModeFlags): Promise<ScenarioComparison> {
  const say = (line: string) => {
    if (!f.quiet) process.stderr.write(`feedlab compare: ${line}\n`);
  };
  const seeds = numberFlag('seeds', f.seeds, DEFAULT_SEEDS, { min: 1, max: 20, integer: true });
  const runs = numberFlag('runs', f.runs, DEFAULT_RUNS, { min: 1, max: 10, integer: true });
  if (f.replays !== undefined && f.runs !== undefined) throw new InputError('compare: --replays gives the measured side; --runs would replay it again: give one of them');
  if (f.calibration !== undefined && f['no-calibrate']) throw new InputError('compare: --calibration and --no-calibrate contradict each other');
  const files: Record<string, string> = {};

  // 1. the costs the simulation runs with
  let calibration = f.calibration;
  const declared = readScenario(path, { calibration });
  let scratch: string | null = null;
  try {
    if (!calibration && !declared.calibration && !f['no-calibrate']) {
      scratch = mkdtempSync(join(tmpdir(), 'feedlab-compare-'));
      calibration = join(scratch, 'calibration.yaml');
      say(`no calibration given: measuring this machine first (feedlab calibrate --out ${calibration}); --no-calibrate keeps the scenario's costs`);
      const progress = new Progress('calibrate', !f.quiet);
      await runFeedlab(['calibrate', '--out', calibration, '--quiet'], (s) => progress.update(Math.min(0.99, s / CALIBRATE_SECONDS), `${Math.round(s)} s elapsed`));
      progress.done(`written to ${calibration}`);
    }
    const sc = readScenario(path, { calibration });
    const calibrationFile = calibration ?? sc.calibration?.file;
    if (calibrationFile) files['calibration.yaml'] = readFileSync(calibrationFile, 'utf8');

    // 2. the policies and the world the replay runs
    const specs = f.policies !== undefined ? f.policies.split(',').map((s) => s.trim()).filter(Boolean) : (sc.replay?.policies ?? [null]);
    if (specs.length === 0) throw new InputError('compare: --policies is empty');
    const policies: FanoutPolicy[] = specs.map((s) => asInputError(() => policyFor(sc, s ?? undefined)));
    for (const p of policies) {
      const why = notLiveRunnable(p);
      if (why) throw new InputError(`compare: cannot replay it: ${why}`);
    }
    const overrides = {
      users: f.users !== undefined ? numberFlag('users', f.users, 0, { min: 2, integer: true }) : undefined,
      timeScale: f['time-scale'] !== undefined ? numberFlag('time-scale', f['time-scale'], 1, { min: 1e-9 }) : undefined,
      workers: f.workers !== undefined ? numberFlag('workers', f.workers, 1, { min: 1, max: 256, integer: true }) : undefined,
    };
    const cores = availableParallelism();
    const mapping = asInputError(() => replayMapping(sc, overrides, cores));
    const saved = f.replays !== undefined ? readReplays(f.replays.split(',').map((s) => s.trim()).filter(Boolean)) : null;
    if (saved) {
      const specs = policies.map(formatPolicy);
      if (!saved.runs.some((docs) => docs.some((d) => specs.includes(d.policy)))) {
        throw new InputError(`compare: the replay documents hold none of the policies compared (${specs.join(', ')})`);
      }
    }
    const progress = new Progress('world', !f.quiet);
    const world = asInputError(() => buildWorld(mapping, (x, d) => progress.update(x, d)));
    progress.done(`${world.graph.users} users, ${world.graph.edges} follows, ${world.schedule.posts.at.length} posts and ${world.schedule.sessions.at.length} sessions scheduled`);

    // 3. the measured side
    let measured: ReplayRuns;
    if (saved) {
      measured = saved;
    } else {
      const pass = [
        ...(calibration ? ['--calibration', calibration] : []),
        ...(f.users !== undefined ? ['--users', f.users] : []),
        ...(f['time-scale'] !== undefined ? ['--time-scale', f['time-scale']] : []),
        ...(f.workers !== undefined ? ['--workers', f.workers] : []),
      ];
      measured = await runReplays({ scenarioPath: path, policies: policies.map(formatPolicy), runs, pass, windowSeconds: world.mapping.wallSeconds, say, showProgress: !f.quiet });
      measured.texts.forEach((t, i) => (files[`replay-${i + 1}.json`] = t));
    }
    const warnings = calibrationChecks(sc.calibration, measured.runs.flat());
    const digests = new Set(measured.runs.flat().map((r) => r.replay?.schedule.digest));
    if (digests.size > 1 || !digests.has(world.digest)) {
      warnings.push(`the replays did not all send the schedule simulated here (schedule digest ${world.digest.slice(0, 12)}): they are of another world, seed or scale, and their figures measure another workload`);
    }

    // 4. the simulated side and the estimate, per policy
    const seedList = Array.from({ length: seeds }, (_, i) => sc.seed + i);
    const inputs: PolicyInput[] = [];
    const unmatched: Array<{ policy: string; side: 'simulated' | 'measured' }> = [];
    for (const policy of policies) {
      const spec = formatPolicy(policy);
      const live = measured.runs.map((docs) => docs.find((d) => d.policy === spec)).filter((d): d is RunResult => d !== undefined);
      if (live.length === 0) {
        unmatched.push({ policy: spec, side: 'simulated' });
        continue;
      }
      // the replays' keys are named under their scratch prefix: the model counts the same names
      const keyPrefix = replayKeyPrefix(live[0]);
      const simulated = seedList.map((seed) => {
        say(`simulating ${spec}, seed ${seed}`);
        return simulateMirror(world, policy, seed, cores, keyPrefix);
      });
      inputs.push({ policy: spec, estimate: estimateSide(sc, world, policy), simulated, measured: live, notes: figureNotes(live, mirrorScenario(world.mapping, cores)) });
    }
    if (inputs.length === 0) throw new InputError(`compare: the replay documents hold none of the policies compared (${policies.map(formatPolicy).join(', ')})`);
    const doc = buildComparison({
      scenario: sc.name,
      policies: inputs,
      labels: { simulated: `simulate (${calibrationFile ? 'calibrated' : "the scenario's costs"}, ${seeds === 1 ? `seed ${seedList[0]}` : `seeds ${seedList[0]}-${seedList[seeds - 1]}`})`, measured: `replay (${measured.runs.length} ${measured.runs.length === 1 ? 'run' : 'runs'})` },
      sources: { simulated: [`the replay's world simulated (sim/replay/mirror.ts)${calibrationFile ? `, costs from ${calibrationFile}` : ''}`], measured: measured.names },
      documentLabels: { simulated: seedList.map((s) => `seed ${s}`), measured: measured.names },
      unmatched,
      warnings,
    });
    return { doc, files };
  } finally {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}
