// feedlab replay's refusals that need no service: bad options, a target it must not break or cannot
// address, an unreachable Redis. Each one line on stderr before anything starts. (The refusal of a
// read rate over what the server sustains measures the server: test/cli/replay.test.ts.)
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EVENTS_YAML } from '../../sim/compare/documents.js';
import { feedlab, oneLine, ROOT, scratchDir, writeScenario } from '../cli-helpers.js';

function feedlabEnv(args: string[], env: Record<string, string>) {
  const r = spawnSync(process.execPath, [join(ROOT, 'dist/cli/main.js'), ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', ...env }, timeout: 120_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

describe('feedlab replay refuses', () => {
  const dir = scratchDir();
  const events = writeScenario(dir, 'events-bad.yaml', EVENTS_YAML);

  it('bad options in one line, exit 2', () => {
    const bad: [string[], RegExp][] = [
      [['replay', events, '--time-scale', '0'], /^feedlab: --time-scale must be a positive number, got "0"$/],
      [['replay', events, events], /^feedlab: replay: too many arguments for 'replay'/],
      [['replay', events, '--policy', 'rate'], /^feedlab: replay: the rate policy decides per \(author, reader\) pair/],
      [['replay', events, '--no-load'], /^feedlab: replay: --no-load, --replace, --schema, --key-prefix and --stream-prefix go with --target/],
      [['replay', events, '--policy', 'push', '--policies', 'pull'], /^feedlab: replay: give --policy or --policies, not both$/],
      [['replay', events, '--target', 'ftp://x'], /^feedlab: replay: --target must be an http:\/\/ URL/],
      [['replay', events, '--users', '1'], /^feedlab: --users must be at least 2/],
      [['replay'], /^feedlab: replay: missing required argument 'scenario'/],
      [['replay', events, '--time-scale', '1e-9'], /^feedlab: replay: at time scale 1e-9 the 10 min scenario takes .* a replay runs 5 s to 7 days: choose --time-scale from 0\.000992 to 120$/],
      [['replay', events, '--time-scale', '-1'], /^feedlab: --time-scale must be a positive number, got "-1"$/],
      [['replay', events, '--max', '--policies', 'push,pull'], /^feedlab: replay --max measures one stack/],
      [['replay', events, '--target', 'http://127.0.0.1:1'], /^feedlab: replay --target: FEED_TOKEN_SECRET must be the deployment's token secret/],
    ];
    for (const [args, re] of bad) {
      const r = feedlab(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(oneLine(r.stderr)).toMatch(re);
    }
  });

  it("what a target's deployment cannot be asked: keys without its prefix, faults on its processes", () => {
    const secret = { FEED_TOKEN_SECRET: 'x'.repeat(40) };
    const noPrefix = feedlabEnv(['replay', events, '--target', 'http://127.0.0.1:1'], secret);
    expect(noPrefix.code).toBe(2);
    expect(oneLine(noPrefix.stderr)).toMatch(/needs its --key-prefix/);
    const cacheLoss = feedlabEnv(['replay', events, '--target', 'http://127.0.0.1:1', '--no-load'], secret);
    expect(oneLine(cacheLoss.stderr)).toMatch(/a cacheLoss event deletes keys by the deployment's --key-prefix/);
    // faults are the replay's own stack's: a deployment is not broken on purpose
    const faulty = writeScenario(dir, 'faults-target.yaml', EVENTS_YAML.replace('events:\n', 'events:\n  - at: 1m\n    apiCrash: {}\n'));
    const fault = feedlabEnv(['replay', faulty, '--target', 'http://127.0.0.1:1', '--key-prefix', 'x:'], secret);
    expect(fault.code).toBe(2);
    expect(oneLine(fault.stderr)).toMatch(/^feedlab: replay --target: the apiCrash event is injected into the replay's own stack; a deployment's processes and event log are not ours to break \(replay it self-contained\)$/);
  });

  it('an unreachable Redis: exit 3, one line naming it', () => {
    const down = feedlabEnv(['replay', events, '--quiet'], { REDIS_URL: 'redis://127.0.0.1:1' });
    expect(down.code).toBe(3);
    expect(oneLine(down.stderr)).toMatch(/^feedlab: replay: .*127\.0\.0\.1:1/);
  });
});
