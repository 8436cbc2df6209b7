// `feedlab compare SCENARIO`: the three answers to one scenario, side by side. On this machine:
//  1. the calibrations (the scenario's own, --calibration's files, or `feedlab calibrate` run just
//     before each replay: the machine's costs drift within the hour, so one calibration is one draw
//     of them and the simulated side's spread holds the calibrations' as well as the seeds');
//  2. the replay: `feedlab replay` of the scenario, `runs` times (or saved documents, --replays);
//  3. the simulation of the very world the replay ran (sim/replay/mirror.ts), with each calibration's
//     costs and the replay's own schedule, `seeds` times (the model's own draws: hops, spreads, waits);
//  4. the estimate: the documents' closed forms with that world's inputs (estimate-side.ts);
//  5. the same simulations again with each replay's own stages in place of the costs
//     (sim/compare/replay-stages.ts): whose each gap is, or with --replay-stages the simulated side;
// then sim/compare's document, figure by figure and policy by policy.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatPolicy, notLiveRunnable, type FanoutPolicy } from '../../core/fanout-policy.js';
import { buildComparison, type CompareDocument, type PolicyInput } from '../../sim/compare/compare.js';
import { fedByReplayRefined } from '../../sim/compare/replay-stages.js';
import { replayMapping } from '../../sim/replay/mapping.js';
import { mirrorScenario, replayKeyPrefix, simulateMirror } from '../../sim/replay/mirror.js';
import type { RunResult } from '../../sim/result.js';
import { policyFor } from '../../sim/run-scenario.js';
import { numberFlag } from '../args.js';
import { expectedSeconds } from '../calibrate/progress.js';
import { CALIBRATE } from '../calibrate/settings.js';
import { InputError } from '../errors.js';
import { Progress } from '../output.js';
import { asInputError, asInputErrorLater, readScenario } from '../prepare-scenario.js';
import { buildWorld } from '../replay/world.js';
import { runFeedlab } from './child-command.js';
import { estimateSide } from './estimate-side.js';
import { calibrationChecks, pairedCalibration } from './calibration-checks.js';
import { figureNotes } from './notes.js';
import { readReplays, runReplays, type ReplayRuns } from './replay-side.js';
import { DEFAULT_RUNS, DEFAULT_SEEDS, type COMPARE_SCENARIO_OPTIONS } from '../spec/live.js';
import type { Values } from '../spec/options.js';

export type ScenarioModeFlags = Values<typeof COMPARE_SCENARIO_OPTIONS>;

/** About how long feedlab calibrate takes at its default samples, for the ETA: its own steps' expected seconds. */
const CALIBRATE_SECONDS = Object.values(expectedSeconds(CALIBRATE.samples, true)).reduce((a, b) => a + b, 0);

export interface ScenarioComparison {
  doc: CompareDocument;
  /** Files kept beside the report with --out: each replay's document, the calibrations used. */
  files: Record<string, string>;
}

/** The number or the files of the calibrations the simulated side runs with, checked against each other. */
function calibrationPlan(f: ScenarioModeFlags, runs: number, replaying: boolean): { given: string[]; count: number } {
  const given = f.calibration !== undefined ? f.calibration.split(',').map((s) => s.trim()).filter(Boolean) : [];
  if (f.calibration !== undefined && given.length === 0) throw new InputError('compare: --calibration is empty');
  if (f.calibration !== undefined && f['no-calibrate']) throw new InputError('compare: --calibration and --no-calibrate contradict each other');
  if (f.calibrations !== undefined && (f.calibration !== undefined || f['no-calibrate'])) {
    throw new InputError(`compare: --calibrations is how many times feedlab calibrate runs here; --${f['no-calibrate'] ? 'no-calibrate' : 'calibration'} says not to: give one of them`);
  }
  // by default one calibration just before each replay: the machine's costs drift within the hour
  const count = numberFlag('calibrations', f.calibrations, replaying ? runs : 1, { min: 1, max: MAX_CALIBRATIONS, integer: true });
  if (replaying && count > runs) throw new InputError(`compare: --calibrations ${count} is more than the ${runs === 1 ? 'one replay' : `${runs} replays`}: each calibration runs just before a replay`);
  return { given, count: given.length > 0 ? given.length : count };
}

/** Calibrations one comparison takes at most (about five minutes each). */
const MAX_CALIBRATIONS = 10;

/** The name a calibration's file is kept under beside the report (--out), by its place among `count`. */
const keptName = (i: number, count: number) => (count === 1 ? 'calibration.yaml' : `calibration-${i}.yaml`);

/** `outDir`: where --out keeps the report and these files (the calibrations measured here are named by their copies there). */
export async function compareScenario(path: string, f: ScenarioModeFlags, outDir?: string): Promise<ScenarioComparison> {
  const say = (line: string) => {
    if (!f.quiet) process.stderr.write(`feedlab compare: ${line}\n`);
  };
  const seeds = numberFlag('seeds', f.seeds, DEFAULT_SEEDS, { min: 1, max: 20, integer: true });
  const runs = numberFlag('runs', f.runs, DEFAULT_RUNS, { min: 1, max: 10, integer: true });
  if (f.replays !== undefined && f.runs !== undefined) throw new InputError('compare: --replays gives the measured side; --runs would replay it again: give one of them');
  const plan = calibrationPlan(f, runs, f.replays === undefined);
  const files: Record<string, string> = {};

  // 1. the costs the simulation runs with: files given, the scenario's own, or measured here; each
  // read once, as given or as measured (its path, its scenario)
  const declared = readScenario(path, { calibration: plan.given[0] });
  const calibrations = plan.given.map((file, i) => ({ file, sc: i === 0 ? declared : readScenario(path, { calibration: file }) }));
  const measureHere = plan.given.length === 0 && !declared.calibration && !f['no-calibrate'];
  if (f.calibrations !== undefined && !measureHere) throw new InputError(`compare: --calibrations runs feedlab calibrate, but the scenario names its own (calibration: ${declared.calibration!.file})`);
  let scratch: string | null = null;
  try {
    let calibrate = async (_i: number): Promise<void> => {};
    if (measureHere) {
      scratch = mkdtempSync(join(tmpdir(), 'feedlab-compare-'));
      const dir = scratch;
      const times = plan.count === 1 ? 'first' : `${plan.count === 2 ? 'twice' : `${plan.count} times`}, ${f.replays !== undefined ? 'now, one after another' : 'each time just before a replay'}`;
      say(`no calibration given: measuring this machine ${times} (feedlab calibrate, about ${Math.round(CALIBRATE_SECONDS / 60)} minutes each); --no-calibrate keeps the scenario's costs`);
      calibrate = async (i) => {
        const file = join(dir, `calibration-${i}.yaml`);
        const progress = new Progress(plan.count === 1 ? 'calibrate' : `calibrate ${i} of ${plan.count}`, !f.quiet);
        await runFeedlab(['calibrate', '--out', file, '--quiet'], (s) => progress.update(Math.min(0.99, s / CALIBRATE_SECONDS), `${Math.round(s)} s elapsed`));
        progress.done(`written to ${file}`);
        const sc = readScenario(path, { calibration: file });
        // named by its copy beside the report: the scratch file goes at the end
        const kept = keptName(i, plan.count);
        sc.calibration!.file = outDir ? join(outDir, kept) : `${kept} (kept with --out)`;
        calibrations.push({ file, sc });
      };
    }

    // 2. the policies and the world the replay runs (the world does not depend on the costs)
    const specs = f.policies !== undefined ? f.policies.split(',').map((s) => s.trim()).filter(Boolean) : (declared.replay?.policies ?? [null]);
    if (specs.length === 0) throw new InputError('compare: --policies is empty');
    const policies: FanoutPolicy[] = specs.map((s) => asInputError(() => policyFor(declared, s ?? undefined)));
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
    const mapping = asInputError(() => replayMapping(declared, overrides, cores));
    const saved = f.replays !== undefined ? readReplays(f.replays.split(',').map((s) => s.trim()).filter(Boolean)) : null;
    if (saved) {
      const specs = policies.map(formatPolicy);
      if (!saved.runs.some((docs) => docs.some((d) => specs.includes(d.policy)))) {
        throw new InputError(`compare: the replay documents hold none of the policies compared (${specs.join(', ')})`);
      }
    }
    const progress = new Progress('world', !f.quiet);
    const world = await asInputErrorLater(() => buildWorld(mapping, (x, d) => progress.update(x, d), cores));
    progress.done(`${world.graph.users} users, ${world.graph.edges} follows, ${world.schedule.posts.at.length} posts and ${world.schedule.sessions.at.length} sessions scheduled`);

    // 3. the measured side, each replay just after its calibration when they are measured here
    let measured: ReplayRuns;
    if (saved) {
      for (let i = 1; measureHere && i <= plan.count; i++) await calibrate(i);
      measured = saved;
    } else {
      const pass = [
        ...(f.users !== undefined ? ['--users', f.users] : []),
        ...(f['time-scale'] !== undefined ? ['--time-scale', f['time-scale']] : []),
        ...(f.workers !== undefined ? ['--workers', f.workers] : []),
      ];
      const before = async (i: number) => {
        if (measureHere && i <= plan.count) await calibrate(i);
        const paired = pairedCalibration(i, calibrations);
        return paired ? ['--calibration', paired.file] : [];
      };
      measured = await runReplays({ scenarioPath: path, policies: policies.map(formatPolicy), runs, pass, windowSeconds: world.mapping.wallSeconds, say, showProgress: !f.quiet }, before);
      measured.texts.forEach((t, i) => (files[`replay-${i + 1}.json`] = t));
    }
    // the scenario's own calibration, when it names one, is its file
    const used = calibrations.length > 0 ? calibrations : declared.calibration ? [{ file: declared.calibration.file, sc: declared }] : [];
    const scs = used.length > 0 ? used.map((c) => c.sc) : [declared];
    used.forEach((c, i) => (files[keptName(i + 1, used.length)] = readFileSync(c.file, 'utf8')));
    const calibrationFiles = scs.map((sc) => sc.calibration?.file).filter((x) => x !== undefined);
    const warnings = calibrationChecks(scs.map((sc) => sc.calibration).filter((c) => c !== undefined), measured.runs);
    const digests = new Set(measured.runs.flat().map((r) => r.replay?.schedule.digest));
    if (digests.size > 1 || !digests.has(world.digest)) {
      warnings.push(`the replays did not all send the schedule simulated here (schedule digest ${world.digest.slice(0, 12)}): they are of another world, seed or scale, and their figures measure another workload`);
    }

    // 4. the simulated side (every calibration, every seed) and the estimate, per policy
    const seedList = Array.from({ length: seeds }, (_, i) => declared.seed + i);
    // the world with each calibration's scenario: the mapping as the world built it, its costs swapped in
    const worlds = scs.map((sc) => ({ ...world, mapping: { ...world.mapping, scenario: sc } }));
    const calibrated = (k: number) => (worlds.length === 1 ? '' : `calibration ${k + 1}, `);
    const inputs: PolicyInput[] = [];
    const fedSources: string[] = [];
    /** Whether any policy's simulated side is the simulations with the replays' stages (--replay-stages, and stages to swap). */
    let stagesSide = false;
    const unmatched: Array<{ policy: string; side: 'simulated' | 'measured' }> = [];
    for (const policy of policies) {
      const spec = formatPolicy(policy);
      // each replay's document of the policy, by run (a run without it keeps its place)
      const byRun = measured.runs.map((docs) => docs.find((d) => d.policy === spec));
      const live = byRun.filter((d): d is RunResult => d !== undefined);
      if (live.length === 0) {
        unmatched.push({ policy: spec, side: 'simulated' });
        continue;
      }
      // the replays' keys are named under their scratch prefix: the model counts the same names
      const keyPrefix = replayKeyPrefix(live[0]);
      // `from`: the first world's place among the calibrations
      const simulateAll = (ws: typeof worlds, what: string, from = 0) =>
        ws.flatMap((w, k) =>
          seedList.map((seed) => {
            say(`simulating ${spec}, ${what}${calibrated(from + k)}seed ${seed}`);
            return simulateMirror(w, policy, seed, cores, keyPrefix);
          }),
        );
      const simulated = simulateAll(worlds, '');
      // each calibration with the stages of the replay it pairs with (by run; the last for any past
      // them, the last with the policy where its own has none): the simulated side with
      // --replay-stages, else what says whose each gap is. Each source line names its replay.
      const feeding = worlds.map((_, k) => byRun[Math.min(k, byRun.length - 1)] ?? live[live.length - 1]);
      const replayName = (doc: RunResult) => (measured.runs.length === 1 ? "the replay's" : `replay ${byRun.indexOf(doc) + 1}'s`);
      const fed = worlds.map((w, k) =>
        fedByReplayRefined(w.mapping.scenario, feeding[k], simulated.slice(k * seeds, (k + 1) * seeds), (sc) =>
          simulateAll([{ ...w, mapping: { ...w.mapping, scenario: sc } }], `the replay's stages (a first pass), `, k),
        ),
      );
      // replays that measured no stage (documents older than the stages) leave nothing to swap
      const fedWorlds = fed.every((x) => x.swapped.length === 0) ? null : worlds.map((w, k) => ({ ...w, mapping: { ...w.mapping, scenario: fed[k].sc } }));
      fed.forEach((x, k) => fedSources.push(`${spec}, ${calibrated(k)}${replayName(feeding[k])} stages: ${x.swapped.length === 0 ? 'none measured' : x.swapped.map((s) => `${s.key} ${s.replay} (calibrated ${s.calibrated})`).join('; ')}`));
      const withStages = fedWorlds ? simulateAll(fedWorlds, "the replay's stages, ") : null;
      const stagesAsSide = f['replay-stages'] === true && withStages !== null;
      if (stagesAsSide) stagesSide = true;
      const simulatedWorlds = stagesAsSide ? fedWorlds! : worlds;
      const notes = figureNotes(live, simulatedWorlds.map((w) => mirrorScenario(w.mapping, cores)));
      // the documents' closed forms with the first calibration's costs (one estimate a policy)
      inputs.push({
        policy: spec,
        estimate: estimateSide(scs[0], world, policy),
        simulated: stagesAsSide ? withStages : simulated,
        measured: live,
        notes,
        ...(withStages && !stagesAsSide ? { replayStages: withStages } : {}),
      });
    }
    if (inputs.length === 0) throw new InputError(`compare: the replay documents hold none of the policies compared (${policies.map(formatPolicy).join(', ')})`);
    const seedText = seeds === 1 ? `seed ${seedList[0]}` : `seeds ${seedList[0]}-${seedList[seeds - 1]}`;
    const seedsEach = `${seedText}${calibrationFiles.length > 1 ? ' each' : ''}`;
    const costsText =
      (calibrationFiles.length === 0 ? "the scenario's costs" : calibrationFiles.length === 1 ? 'calibrated' : `${calibrationFiles.length} calibrations`) +
      (stagesSide ? ", the replays' stages swapped in" : '');
    const doc = buildComparison({
      scenario: declared.name,
      policies: inputs,
      labels: { simulated: `simulate (${costsText}, ${seedsEach})`, measured: `replay (${measured.runs.length} ${measured.runs.length === 1 ? 'run' : 'runs'})` },
      sources: { simulated: [`the replay's world simulated (sim/replay/mirror.ts)${calibrationFiles.length > 0 ? `, costs from ${calibrationFiles.join(', ')}` : ''}`, ...(f['replay-stages'] ? fedSources : [])], measured: measured.names },
      ...(f['replay-stages'] ? {} : { replayStages: { label: `simulate (the replays' stages in place of the costs, ${seedsEach})`, sources: fedSources } }),
      documentLabels: { simulated: worlds.flatMap((_, k) => seedList.map((s) => `${calibrated(k)}seed ${s}`)), measured: measured.names },
      unmatched,
      warnings,
    });
    return { doc, files };
  } finally {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}
