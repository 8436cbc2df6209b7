// feedlab estimate through the built CLI.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { feedlab, ROOT } from '../cli/cli-helpers.js';

const REQUIRED = [
  'posts_per_second_avg',
  'posts_per_second_peak',
  'reads_per_second_avg',
  'reads_per_second_peak',
  'fanout_writes_per_day',
  'fanout_writes_per_second_avg',
  'timeline_memory_bytes_naive',
  'timeline_memory_bytes_redis',
  'celebrity_fanout_seconds',
];

describe('feedlab estimate', () => {
  it('--list shows every preset with one line', () => {
    const r = feedlab(['estimate', '--list']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n').map((l) => l.split(/\s+/)[0])).toEqual(['social-feed-chapter', 'hybrid-fanout-lesson', 'facebook-news-feed', 'twitter-feed-interview', 'twitter-2012']);
  });

  it('--json prints the feedlab.estimate/1 document with the stable figure ids', () => {
    const r = feedlab(['estimate', '--preset', 'social-feed-chapter', '--json']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.schema).toBe('feedlab.estimate/1');
    expect(doc.preset).toBe('social-feed-chapter');
    expect(doc.inputs.dau).toBe(50e6);
    const ids = doc.figures.map((f: { id: string }) => f.id);
    for (const id of REQUIRED) expect(ids).toContain(id);
    const media = doc.figures.find((f: { id: string }) => f.id === 'media_bytes_per_year');
    expect(media).toMatchObject({ value: 328.5e12, unit: 'bytes/year', documentValue: 320e12 });
    expect(media.erratum).toMatch(/328\.5 TB/);
    expect(media.formula).toBe('media_bytes_per_day × 365');
  });

  it('--explain prints formula, numbers and result with units under headings, and the erratum', () => {
    const r = feedlab(['estimate', '--preset', 'social-feed-chapter', '--explain']);
    expect(r.stdout).toMatch(/^Posts and reads$/m);
    expect(r.stdout).toMatch(/posts_per_day = dau × posters\.share × posts\.perPoster\n\s+= 50M × 10% × 2\/day\n\s+= 10M\/day/);
    expect(r.stdout).toMatch(/= 329 TB\/year {3}ERRATUM: the document states ≈320 TB\/year; 900 GB\/day x 365 = 328\.5 TB\/year/);
  });

  it('--set changes an input; a scenario file gives the inputs in the run schema', () => {
    const r = feedlab(['estimate', '--preset', 'twitter-2012', '--set', 'dau=300e6', '--json']);
    const doc = JSON.parse(r.stdout);
    expect(doc.inputs.dau).toBe(300e6);
    expect(doc.figures.find((f: { id: string }) => f.id === 'posts_per_day').value).toBe(800e6);
    const s = feedlab(['estimate', join(ROOT, 'scenarios/celebrity-burst.yaml'), '--json']);
    expect(s.code).toBe(0);
    const fromScenario = JSON.parse(s.stdout);
    expect(fromScenario.inputs.dau).toBe(200e6 * 0.4);
    expect(fromScenario.inputs['celebrity.followers']).toBe(50e6);
    expect(fromScenario.inputs['fleet.writesPerSecond']).toBe(250e3);
    expect(fromScenario.figures.find((f: { id: string }) => f.id === 'celebrity_fanout_seconds').value).toBe(200);
    // twitter-2012 pushes everything, and its 31M-follower account fans out on the 20-worker large-post pool
    const t = JSON.parse(feedlab(['estimate', join(ROOT, 'scenarios/twitter-2012.yaml'), '--json']).stdout);
    expect(t.inputs.threshold).toBe('Infinity');
    expect(t.figures.find((f: { id: string }) => f.id === 'celebrity_fanout_seconds').value).toBe(310);
    expect(t.figures.find((f: { id: string }) => f.id === 'redis_ops_per_read').value).toBe(2);
  });

  it('bad input: one line and exit 2', () => {
    const cases: Array<[string[], RegExp]> = [
      [['estimate', '--preset', 'social-feed'], /unknown preset "social-feed"; did you mean "social-feed-chapter"\?/],
      [['estimate', '--set', 'followers.avgg=300'], /unknown input "followers.avgg"; did you mean "followers.avg"\?/],
      [['estimate', '--set', 'dau=many'], /--set dau=many: /],
      [['estimate', 'nowhere.yaml'], /cannot read scenario file "nowhere.yaml"/],
    ];
    for (const [args, pattern] of cases) {
      const r = feedlab(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(r.stderr, args.join(' ')).toMatch(pattern);
    }
  });
});

const redisUp = spawnSync('redis-cli', ['-u', process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', 'ping'], { encoding: 'utf8' }).stdout?.trim() === 'PONG';
if (!redisUp && process.env.CI !== 'true') console.warn('SKIPPED: feedlab estimate --measure tests need Redis (REDIS_URL or 127.0.0.1:6379), which is unreachable');

describe.skipIf(!redisUp && process.env.CI !== 'true')('feedlab estimate --measure', () => {
  it('measures the preset timeline shape on Redis, within 10% of the model, and leaves no key', () => {
    const r = feedlab(['estimate', '--preset', 'social-feed-chapter', '--measure', '--timelines', '500', '--json', '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    const m = JSON.parse(r.stdout).measurement;
    expect(m.entries).toBe(800);
    expect(m.encoding).toBe('skiplist');
    expect(Math.abs(m.ratio.usage - 1)).toBeLessThan(0.1);
    expect(Math.abs(m.ratio.instance - 1)).toBeLessThan(0.1);
    expect(m.keysRemoved).toBe(m.keysWritten);
    const left = spawnSync('redis-cli', ['-u', process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', '--scan', '--pattern', `${m.prefix}*`], { encoding: 'utf8' });
    expect(left.stdout.trim()).toBe('');
  });

  it('an unreachable Redis is one line and exit 3', () => {
    const r = spawnSync(process.execPath, [join(ROOT, 'dist/cli/main.js'), 'estimate', '--measure', '--quiet'], { encoding: 'utf8', env: { ...process.env, REDIS_URL: 'redis://127.0.0.1:1' } });
    expect(r.status).toBe(3);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/unreachable/);
  });
});
