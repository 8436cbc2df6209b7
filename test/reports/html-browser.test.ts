// report.html in a real browser: Debian's Chromium, headless, opening the file offline. Every chart
// must draw, nothing may be fetched, nothing may log an error; a screenshot of each page is kept.
// Without /usr/bin/chromium the test is skipped with one loud line, except under CI=true, where it fails.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedlab, scratchDir } from '../cli/cli-helpers.js';
import { FIXTURE, PLAN_FIXTURE } from './docs.js';

const CHROMIUM = '/usr/bin/chromium';
const CI = process.env.CI === 'true';
const HAVE_CHROMIUM = existsSync(CHROMIUM);
export const SCREENSHOTS = join(import.meta.dirname, '__screenshots__');

if (!HAVE_CHROMIUM && !CI) console.warn(`\n!!! SKIPPED report.html in headless Chromium: ${CHROMIUM} not found (apt-get install -y chromium; under CI=true this fails) !!!\n`);

interface Visit {
  charts: Array<{ name: string; rendered: string | null; paths: number; drawnPaths: number; circles: number; coveringLabels: string[] }>;
  consoleErrors: string[];
  pageErrors: string[];
  requests: string[];
}

describe.skipIf(!HAVE_CHROMIUM && !CI)('report.html in headless Chromium', () => {
  const dir = scratchDir();
  let profile = '';
  let context: BrowserContext | undefined;

  beforeAll(async () => {
    if (!HAVE_CHROMIUM) throw new Error(`${CHROMIUM} not found and CI=true: install it (apt-get install -y chromium)`);
    // a small real run, sweep and plan through the built CLI, then `feedlab report` writes report.html
    const run = feedlab(['run', FIXTURE, '--out', join(dir, 'run'), '--quiet']);
    expect(run.stderr).toBe('');
    const sweep = feedlab(['sweep', FIXTURE, '--out', join(dir, 'sweep'), '--quiet']);
    expect(sweep.stderr).toBe('');
    const plan = feedlab(['plan', PLAN_FIXTURE, '--out', join(dir, 'plan'), '--quiet']);
    expect(plan.stderr).toBe('');
    // one simulated minute: every series over time is a single point
    const oneMinute = join(dir, 'one-minute.yaml');
    writeFileSync(oneMinute, readFileSync(FIXTURE, 'utf8').replace('duration: 30m', 'duration: 1m').replace(/^events:[^]*?(?=^infrastructure)/m, ''));
    expect(feedlab(['run', oneMinute, '--out', join(dir, 'short'), '--quiet']).stderr).toBe('');
    for (const d of ['run', 'sweep', 'plan']) expect(feedlab(['report', join(dir, d, 'report.json')]).code).toBe(0);

    profile = mkdtempSync(join(tmpdir(), 'feedlab-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      viewport: { width: 1100, height: 900 },
      offline: true,
    });
  });

  afterAll(async () => {
    await context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  async function visit(file: string, screenshot: string): Promise<Visit> {
    const page = await context!.newPage();
    const v: Visit = { charts: [], consoleErrors: [], pageErrors: [], requests: [] };
    page.on('console', (m) => {
      if (m.type() === 'error') v.consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => v.pageErrors.push(e.message));
    page.on('request', (r) => {
      if (!r.url().startsWith('file://')) v.requests.push(r.url());
    });
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    await page.waitForFunction(() => document.querySelectorAll('[data-chart]:not([data-rendered="true"])').length === 0, undefined, { timeout: 10_000 }).catch(() => undefined);
    v.charts = await page.$$eval('[data-chart]', (els) =>
      els.map((el) => {
        const paths = [...el.querySelectorAll('svg path')];
        return {
          name: (el as HTMLElement).dataset.chart ?? '',
          rendered: el.getAttribute('data-rendered'),
          paths: paths.length,
          // a drawn line: a path through at least two points inside the picture
          drawnPaths: paths.filter((p) => (p.getAttribute('d') ?? '').includes('L') && (p as SVGPathElement).getTotalLength() > 0).length,
          circles: el.querySelectorAll('svg circle').length,
          // event labels whose box a drawn line (series or reference) passes through
          coveringLabels: [...el.querySelectorAll<SVGTextElement>('text.marker-label')]
            .filter((t) => {
              const b = t.getBBox();
              const inside = (x: number, y: number) => x >= b.x && x <= b.x + b.width && y >= b.y && y <= b.y + b.height;
              const series = [...el.querySelectorAll<SVGPathElement>('svg path.series')].some((p) => {
                const n = p.getTotalLength();
                for (let l = 0; l <= n; l += 1) {
                  const q = p.getPointAtLength(l);
                  if (inside(q.x, q.y)) return true;
                }
                return false;
              });
              const refs = [...el.querySelectorAll<SVGLineElement>('svg line.ref')].some((r) => {
                const y = r.y1.baseVal.value;
                return y >= b.y && y <= b.y + b.height && r.x1.baseVal.value <= b.x + b.width && r.x2.baseVal.value >= b.x;
              });
              return series || refs;
            })
            .map((t) => t.textContent ?? ''),
        };
      }),
    );
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: screenshot, fullPage: true });
    await page.close();
    console.log(`report.html screenshot: ${screenshot}`);
    return v;
  }

  function expectClean(v: Visit, names: string[]): void {
    expect(v.charts.map((c) => c.name)).toEqual(names);
    for (const c of v.charts) {
      expect(c.rendered, c.name).toBe('true');
      expect(c.drawnPaths, c.name).toBeGreaterThan(0);
      expect(c.coveringLabels, `${c.name}: an event label over a line`).toEqual([]);
    }
    expect(v.consoleErrors).toEqual([]);
    expect(v.pageErrors).toEqual([]);
    expect(v.requests).toEqual([]);
  }

  it('draws every chart of a run report, offline, without an error', async () => {
    const shot = join(SCREENSHOTS, 'report-run.png');
    const v = await visit(join(dir, 'run', 'report.html'), shot);
    expectClean(v, ['lag-backlog', 'memory', 'read-latency', 'followers']);
    expect(v.charts.find((c) => c.name === 'followers')!.circles).toBeGreaterThan(10); // the CCDF's points
    expect(statSync(shot).size).toBeGreaterThan(10_000);
  });

  it('draws every chart of a sweep report, the trade-off curves first', async () => {
    const shot = join(SCREENSHOTS, 'report-sweep.png');
    const v = await visit(join(dir, 'sweep', 'report.html'), shot);
    expectClean(v, ['tradeoff', 'lag-backlog', 'memory', 'read-latency', 'followers']);
    expect(v.charts[0].circles).toBeGreaterThanOrEqual(9); // three threshold points in each of three panels
  });

  it('draws every chart of a plan report: the spread of the resources and the headroom of each objective', async () => {
    const shot = join(SCREENSHOTS, 'report-plan.png');
    const v = await visit(join(dir, 'plan', 'report.html'), shot);
    expectClean(v, ['spread', 'headroom']);
    expect(v.charts.find((c) => c.name === 'headroom')!.circles).toBeGreaterThanOrEqual(4); // three drops and the binding ring
    expect(statSync(shot).size).toBeGreaterThan(10_000);
  });

  it('draws a one-minute run\'s single points as dots, not as empty lines', async () => {
    const v = await visit(join(dir, 'short', 'report.html'), join(SCREENSHOTS, 'report-one-minute.png'));
    expect(v.charts.map((c) => c.name)).toEqual(['lag-backlog', 'memory', 'read-latency', 'followers']);
    for (const c of v.charts) {
      expect(c.rendered, c.name).toBe('true');
      expect(c.circles, c.name).toBeGreaterThan(0);
    }
    expect(v.consoleErrors).toEqual([]);
    expect(v.pageErrors).toEqual([]);
  });

  it('shows the value under the pointer on a chart over time', async () => {
    const page = await context!.newPage();
    await page.goto(pathToFileURL(join(dir, 'run', 'report.html')).href);
    const hover = page.locator('[data-chart="lag-backlog"] rect.hover');
    const box = (await hover.boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.2, box.y + 40);
    const tip = page.locator('[data-chart="lag-backlog"] .tip');
    expect(await tip.isVisible()).toBe(true);
    expect(await tip.textContent()).toMatch(/simulated time: \d+(\.\d)? min.*lag p99: .*backlog: /);
    await page.close();
  });
});
