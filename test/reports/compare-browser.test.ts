// A compare report.html in a real browser, as html-browser.test.ts opens the run, sweep and plan
// pages: Debian's Chromium, headless, offline, from file://. Every comparison chart must draw (SVG
// paths, a dot per document, the 15% band), nothing may be fetched or log an error. The page is made
// by the built CLI: `feedlab compare` of a simulation against the saved replay, --out.
// Without /usr/bin/chromium the test is skipped with one loud line, except under CI=true, where it fails.
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedlab, scratchDir } from '../cli/cli-helpers.js';
import { FIGURES } from '../../sim/compare/figures.js';
import { EVENTS_YAML, REPLAY_RUNS } from '../sim/compare/documents.js';

const CHROMIUM = '/usr/bin/chromium';
const CI = process.env.CI === 'true';
const HAVE_CHROMIUM = existsSync(CHROMIUM);
/** Beside html-browser.test.ts's screenshots (not committed). */
const SCREENSHOTS = join(import.meta.dirname, '__screenshots__');

if (!HAVE_CHROMIUM && !CI) console.warn(`\n!!! SKIPPED compare report.html in headless Chromium: ${CHROMIUM} not found (apt-get install -y chromium; under CI=true this fails) !!!\n`);

describe.skipIf(!HAVE_CHROMIUM && !CI)('compare report.html in headless Chromium', () => {
  const dir = scratchDir();
  let profile = '';
  let context: BrowserContext | undefined;

  beforeAll(async () => {
    if (!HAVE_CHROMIUM) throw new Error(`${CHROMIUM} not found and CI=true: install it (apt-get install -y chromium)`);
    writeFileSync(join(dir, 'events.yaml'), EVENTS_YAML);
    const run = feedlab(['run', join(dir, 'events.yaml'), '--out', join(dir, 'sim'), '--quiet']);
    expect(run.stderr).toBe('');
    const compare = feedlab(['compare', join(dir, 'sim', 'report.json'), REPLAY_RUNS[0], '--out', join(dir, 'compare')]);
    expect(compare.code).toBe(0);
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

  it('draws every comparison chart, offline, without an error', async () => {
    const page = await context!.newPage();
    const errors: string[] = [];
    const requests: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('request', (r) => {
      if (!r.url().startsWith('file://')) requests.push(r.url());
    });
    await page.goto(pathToFileURL(join(dir, 'compare', 'report.html')).href, { waitUntil: 'load' });
    const charts = await page.$$eval('[data-compare-chart]', (els) =>
      els.map((el) => ({
        name: (el as HTMLElement).dataset.compareChart ?? '',
        rendered: el.getAttribute('data-rendered'),
        // a drawn mark: a path with a visible extent (a mean bar, an error bar, an estimate's diamond)
        drawnPaths: [...el.querySelectorAll('svg path')].filter((p) => (p as SVGPathElement).getTotalLength() > 0).length,
        dots: el.querySelectorAll('svg circle').length,
        bands: el.querySelectorAll('svg rect.band').length,
        labels: [...el.querySelectorAll('svg text')].map((t) => t.textContent ?? ''),
      })),
    );
    mkdirSync(SCREENSHOTS, { recursive: true });
    const shot = join(SCREENSHOTS, 'report-compare.png');
    await page.screenshot({ path: shot, fullPage: true });
    await page.close();
    console.log(`report.html screenshot: ${shot}`);

    expect(charts.map((c) => c.name)).toContain('lag_p99');
    // one chart per figure, in order, but a large post's writes: the fixtures' world has no such post and its replay is older than the figure
    expect(charts.map((c) => c.name)).toEqual(FIGURES.map((f) => f.id).filter((id) => id !== 'stage_large_writes_per_timeline_p50'));
    for (const c of charts) {
      expect(c.rendered, c.name).toBe('true');
      expect(c.drawnPaths, c.name).toBeGreaterThan(0);
    }
    const lag = charts.find((c) => c.name === 'lag_p99')!;
    expect(lag.dots).toBe(2); // the simulation's one document and the replay's
    expect(lag.bands).toBe(1);
    expect(lag.labels).toContain('threshold:100000:skip-dormant');
    expect(lag.labels.some((l) => /OUTSIDE|within 15%|inside the noise/.test(l))).toBe(true);
    // a key class only the replay has: its column drawn, the simulated one saying why
    expect(charts.find((c) => c.name === 'memory_bodies_bytes')!.labels).toContain('not modelled');
    expect(errors).toEqual([]);
    expect(requests).toEqual([]);
    expect(statSync(shot).size).toBeGreaterThan(10_000);
  });
});
