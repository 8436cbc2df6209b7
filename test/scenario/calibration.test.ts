// Calibration files in scenarios: the included file's keys where the scenario writes none, the
// command line's over both, the provenance carried, and every bad file refused in one line located
// in it (file:line:col).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, test } from 'vitest';
import { InputError } from '../../sim/errors.js';
import { documentProvenance, parseCalibration } from '../../sim/scenario/calibration.js';
import { loadScenario } from '../../sim/scenario/load.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'feedlab-calibration-'));
});

const PROVENANCE = `calibration:
  machine: { hostname: lab, cpu: Test CPU, cores: 2, memory: 24GB }
  date: 2026-12-02T10:00:00.000Z
  contention: { otherShare: 0.05, contended: false, over: 50s }
  measurements: { rtt: { median: 95us } }
`;

/** A calibration file writing `infra` (YAML lines under infrastructure:). */
function calibrationFile(name: string, infra: string, provenance = PROVENANCE): string {
  const path = join(dir, name);
  writeFileSync(path, `${provenance}infrastructure:\n${infra}`);
  return path;
}

function scenario(name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, `name: calibrated\n${body}`);
  return path;
}

function failure(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof InputError) return err.line();
    throw err;
  }
  throw new Error('expected an InputError');
}

const MEASURED = `  writesPerSecondPerWorker: 46500
  costs: { rtt: 110us, zadd: 12.5us, expand: 365us, expandPerFollower: 1us }
  postToLog: { min: 1ms, p50: 4ms, p99: 20ms, max: 21ms }
  api: { cpuPerRead: 185us, cpuPerList: 29us, spread: { min: 0.5, p50: 0.9, max: 24 } }
`;

describe('a scenario with calibration: FILE', () => {
  test("the file's keys apply where the scenario writes none; the scenario's own keys win; the rest are defaults", () => {
    calibrationFile('cal.yaml', MEASURED);
    const sc = loadScenario(scenario('s.yaml', 'calibration: cal.yaml\ninfrastructure:\n  costs: { rtt: 0.5ms }\n  api: { cpuPerList: 40us }\n'));
    const i = sc.infrastructure;
    expect(i.writesPerSecondPerWorker).toBe(46500);
    expect(i.costs.rtt).toBe(0.0005); // the scenario's
    expect(i.costs.zadd).toBe(0.0000125); // the file's
    expect(i.costs.expand).toBe(0.000365);
    expect(i.costs.expandPerFollower).toBe(0.000001);
    expect(i.costs.zrange).toBe(0.000015); // the default
    expect(i.postToLog.points).toEqual([
      { p: 0, value: 0.001 },
      { p: 0.5, value: 0.004 },
      { p: 0.99, value: 0.02 },
      { p: 1, value: 0.021 },
    ]);
    expect(i.api!.cpuPerRead).toBe(0.000185);
    expect(i.api!.cpuPerList).toBe(0.00004); // the scenario's
    expect(i.api!.cpuPerPost).toBe(0.00001); // the default
    expect(i.api!.spread.points.map((q) => q.value)).toEqual([0.5, 0.9, 24]);
    expect(sc.calibration).toEqual({ file: join(dir, 'cal.yaml'), machine: 'lab, 2 x Test CPU', date: '2026-12-02T10:00:00.000Z', contended: false });
  });

  test('--calibration wins over the scenario and its include; the provenance is the command line\'s', () => {
    calibrationFile('included.yaml', MEASURED);
    const flag = calibrationFile('flag.yaml', '  costs: { rtt: 90us, zrange: 20us }\n  api: { cpuPerList: 31us }\n', PROVENANCE.replace('lab', 'other').replace('contended: false', 'contended: true'));
    const sc = loadScenario(scenario('s.yaml', 'calibration: included.yaml\ninfrastructure: { costs: { rtt: 0.5ms, zrange: 1ms } }\n'), { calibration: flag });
    expect(sc.infrastructure.costs.rtt).toBe(0.00009);
    expect(sc.infrastructure.costs.zrange).toBe(0.00002);
    expect(sc.infrastructure.costs.zadd).toBe(0.0000125); // still the include's
    expect(sc.infrastructure.api!.cpuPerList).toBe(0.000031);
    expect(sc.calibration).toMatchObject({ file: flag, machine: 'other, 2 x Test CPU', contended: true });
  });

  test('api: none in the scenario keeps the API tier out of an include, not out of --calibration', () => {
    const cal = calibrationFile('cal.yaml', MEASURED);
    const path = scenario('s.yaml', 'calibration: cal.yaml\ninfrastructure: { api: none }\n');
    expect(loadScenario(path).infrastructure.api).toBeNull();
    const api = loadScenario(path, { calibration: cal }).infrastructure.api!;
    expect(api.cpuPerRead).toBe(0.000185);
    expect(api.coresPerInstance).toBe(1); // its other keys are the defaults
    expect(api.instances).toBeNull();
  });

  test('without a calibration nothing changes and no provenance is carried', () => {
    const sc = loadScenario(scenario('s.yaml', 'duration: 1h\n'));
    expect(sc.calibration).toBeUndefined();
    expect(sc.infrastructure.costs.rtt).toBe(0.0003);
  });

  test("a key of the api tier the scenario writes wins over the file's, the file's other api keys apply", () => {
    calibrationFile('cal.yaml', MEASURED);
    const sc = loadScenario(scenario('s.yaml', 'calibration: cal.yaml\ninfrastructure:\n  api:\n    spread: 1\n'));
    expect(sc.infrastructure.api!.spread.points).toEqual([
      { p: 0, value: 1 },
      { p: 1, value: 1 },
    ]);
    expect(sc.infrastructure.api!.cpuPerRead).toBe(0.000185);
  });
});

describe('bad calibration files: one line, located in the file', () => {
  const bad = (infra: string, provenance = PROVENANCE) => failure(() => parseCalibration(`${provenance}infrastructure:\n${infra}`, 'cal.yaml'));

  test.each([
    ['a bad unit', '  costs: { rtt: 3 parsecs }\n', /^cal\.yaml:7:17: infrastructure\.costs\.rtt: unknown unit "parsecs"/],
    ['a misspelt key', '  costs: { rttt: 3us }\n', /^cal\.yaml:7:12: infrastructure\.costs\.rttt: unknown key; did you mean "rtt"\?/],
    ['a key that is not measured', '  fanoutWorkers: 8\n', /^cal\.yaml:7:3: infrastructure\.fanoutWorkers: not a measured cost: a calibration file holds only writesPerSecondPerWorker, costs\.rtt/],
    ['api: none', '  api: none\n', /^cal\.yaml:7:3: infrastructure\.api: not a measured cost/],
    ['quantiles that fall', '  postToLog: { p50: 6ms, p99: 2ms }\n', /^cal\.yaml:7:26: infrastructure\.postToLog\.p99: p99 is below p50/],
    ['a negative cost', '  costs: { zadd: -2us }\n', /^cal\.yaml:7:18: infrastructure\.costs\.zadd: .*negative/],
    ['nothing measured', '  {}\n', /^cal\.yaml:7:3: infrastructure: writes no measured cost/],
  ])('%s', (_what, infra, line) => {
    expect(bad(infra)).toMatch(line);
  });

  test('provenance: a missing machine, a missing hostname, a date that is none, contended not a boolean', () => {
    expect(bad('  costs: { rtt: 1us }\n', PROVENANCE.replace(/ {2}machine:.*\n/, ''))).toMatch(/^cal\.yaml:2:3: calibration\.machine: required key is missing/);
    expect(bad('  costs: { rtt: 1us }\n', PROVENANCE.replace('hostname: lab, ', ''))).toMatch(/^cal\.yaml:2:\d+: calibration\.machine\.hostname: required key is missing/);
    expect(bad('  costs: { rtt: 1us }\n', PROVENANCE.replace('2026-12-02T10:00:00.000Z', 'yesterday'))).toMatch(/^cal\.yaml:3:9: calibration\.date: "yesterday" is not a date/);
    expect(bad('  costs: { rtt: 1us }\n', PROVENANCE.replace('contended: false', 'contended: maybe'))).toMatch(/^cal\.yaml:4:\d+: calibration\.contention\.contended: expected true or false/);
  });

  test("core waits: a process calibrate does not run, a negative share, a wait that is not a duration", () => {
    const waits = (line: string) => PROVENANCE.replace('  measurements:', `  coreWaits:\n    ${line}\n  measurements:`);
    expect(bad('  costs: { rtt: 1us }\n', waits('workr: { perSlice: 20us, ofCpu: 0.3 }'))).toMatch(/^cal\.yaml:6:5: calibration\.coreWaits\.workr: "workr" is not a valid key \(expected a process calibrate ran: worker, server, redis, postgres or driver\)/);
    expect(bad('  costs: { rtt: 1us }\n', waits('worker: { perSlice: 20us, ofCpu: -0.3 }'))).toMatch(/^cal\.yaml:6:\d+: calibration\.coreWaits\.worker\.ofCpu: /);
    expect(bad('  costs: { rtt: 1us }\n', waits('server: { perSlice: fast, ofCpu: 0.3 }'))).toMatch(/^cal\.yaml:6:\d+: calibration\.coreWaits\.server\.perSlice: /);
  });

  test("the running worker's commandstats: read back by command, a bad count or time refused at its line", () => {
    const commands = (line: string) => PROVENANCE.replace('  measurements: { rtt: { median: 95us } }', `  measurements:\n    workerBySize:\n      redisCommands:\n        ${line}`);
    const good = parseCalibration(`${commands('evalsha: { calls: 4000, usec: 86000 }')}infrastructure:\n  costs: { rtt: 1us }\n`, 'cal.yaml');
    expect(good.provenance.workerRedisCommands).toEqual({ evalsha: { calls: 4000, usec: 86_000 } });
    expect(bad('  costs: { rtt: 1us }\n', commands('evalsha: { calls: -4, usec: 86000 }'))).toMatch(/^cal\.yaml:8:\d+: calibration\.measurements\.workerBySize\.redisCommands\.evalsha\.calls: /);
    expect(bad('  costs: { rtt: 1us }\n', commands('zadd: { calls: 4, usec: slow }'))).toMatch(/^cal\.yaml:8:\d+: calibration\.measurements\.workerBySize\.redisCommands\.zadd\.usec: /);
    expect(bad('  costs: { rtt: 1us }\n', commands('ZADD: { calls: 4, usec: 1 }'))).toMatch(/^cal\.yaml:8:9: calibration\.measurements\.workerBySize\.redisCommands\.ZADD: "ZADD" is not a valid key \(expected a Redis command, lower case/);
    // a module's command (a dot in its name) is one too
    expect(parseCalibration(`${commands('json.set: { calls: 2, usec: 9 }')}infrastructure:\n  costs: { rtt: 1us }\n`, 'cal.yaml').provenance.workerRedisCommands).toEqual({ 'json.set': { calls: 2, usec: 9 } });
    // a file without them (older, or a target's), or with the key left empty, has none
    expect(parseCalibration(`${PROVENANCE}infrastructure:\n  costs: { rtt: 1us }\n`, 'cal.yaml').provenance).not.toHaveProperty('workerRedisCommands');
    const empty = PROVENANCE.replace('  measurements: { rtt: { median: 95us } }', '  measurements:\n    workerBySize:\n      redisCommands:');
    expect(parseCalibration(`${empty}\ninfrastructure:\n  costs: { rtt: 1us }\n`, 'cal.yaml').provenance).not.toHaveProperty('workerRedisCommands');
    // and a result or plan document names the calibration without them
    expect(documentProvenance(good.provenance)).toEqual({ file: 'cal.yaml', machine: 'lab, 2 x Test CPU', date: '2026-12-02T10:00:00.000Z', contended: false });
  });

  test('the blocks: invalid YAML, an unknown block, a missing one, not a map', () => {
    expect(failure(() => parseCalibration('calibration: [\n', 'cal.yaml'))).toMatch(/^cal\.yaml:\d+:\d+: invalid YAML/);
    expect(failure(() => parseCalibration(`${PROVENANCE}infrastructure: { costs: { rtt: 1us } }\nscenario: x\n`, 'cal.yaml'))).toMatch(/^cal\.yaml:7:1: scenario: unknown block/);
    expect(failure(() => parseCalibration(PROVENANCE, 'cal.yaml'))).toMatch(/^cal\.yaml:1:1: infrastructure: the infrastructure block is missing/);
    expect(failure(() => parseCalibration('- 1\n', 'cal.yaml'))).toMatch(/^cal\.yaml:1:1: a calibration file is a map/);
  });

  test("a missing include is located at the scenario's key; a missing --calibration names the file", () => {
    const path = scenario('s.yaml', 'duration: 1h\ncalibration: nowhere.yaml\n');
    expect(failure(() => loadScenario(path))).toBe(`${path}:3:14: cannot read calibration file "${join(dir, 'nowhere.yaml')}": no such file`);
    expect(failure(() => loadScenario(scenario('t.yaml', 'duration: 1h\n'), { calibration: join(dir, 'gone.yaml') }))).toBe(`cannot read calibration file "${join(dir, 'gone.yaml')}": no such file`);
  });

  test("an error in an included file is located in that file, not the scenario", () => {
    calibrationFile('cal.yaml', '  costs: { rebuild: soon }\n');
    expect(failure(() => loadScenario(scenario('s.yaml', 'calibration: cal.yaml\n')))).toMatch(new RegExp(`^${join(dir, 'cal.yaml')}:7:21: infrastructure\\.costs\\.rebuild: expected a duration`));
  });
});
