// The comparison charts of a compare report.html: per figure, one panel with a group per policy and
// in it a column per side (estimate, simulated, measured). Each column shows its mean (a bar; a
// diamond for the estimate), its documents (the seeds or runs) as dots and their range as an error
// bar; behind each group, the band of +-15% around the measured mean. The policies are categories,
// which the time-series charts (charts.ts) do not draw, hence this second, smaller chart code.
//
// It runs in the browser: the page inlines this function's source (`drawComparisonCharts.toString()`),
// so it must stay self-contained (no imports at run time, nothing outside its own body). It reads the
// specs from the JSON block `#feedlab-compare-charts`, draws each `[data-compare-chart]` container as
// SVG and marks it `data-rendered="true"`.

/** How the axis counts: seconds (ms/s/min), bytes (KB/MB/GB), per second (k/M), plain counts. */
export type CompareUnit = 'seconds' | 'bytes' | 'rate' | 'count';

export interface CompareColumn {
  side: 'estimate' | 'simulated' | 'measured';
  /** The side's mean (the estimate's one value); null: the side has none, `missing` says why. */
  mean: number | null;
  /** Each document's value, labelled (seed 1, run 2, a.json). */
  values: Array<{ label: string; value: number }>;
  missing?: string;
  /** The tooltip of the mean: its value, the spread. */
  title: string;
}

export interface CompareGroup {
  policy: string;
  /** Under the group: "1.02 within 15%". */
  verdict: string;
  verdictClass: 'within' | 'noise' | 'outside' | 'n/a';
  /** The measured mean, the centre of the band. */
  measured: number | null;
  columns: CompareColumn[];
}

export interface CompareChartSpec {
  unit: CompareUnit;
  log: boolean;
  /** The band's half-width, relative to the measured mean (0.15). */
  band: number;
  sides: Array<{ side: CompareColumn['side']; label: string; color: string }>;
  groups: CompareGroup[];
}

export const COMPARE_CHART_DATA_ID = 'feedlab-compare-charts';

export function drawComparisonCharts(): void {
  const W = 900;
  const LEFT = 78;
  const RIGHT = 16;
  const TOP = 40;
  const H = 250;
  const PLOT_R = W - RIGHT;
  const GRID = '#e3e3e3';
  const VERDICT_COLORS: Record<string, string> = { within: '#17703a', noise: '#8a6d00', outside: '#b3261e', 'n/a': '#666' };

  const esc = (s: string): string => s.replace(/[&<>"]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&quot;'));
  const f1 = (v: number): string => v.toFixed(1);

  type Table = Array<[number, string]>;
  const SECONDS: Table = [[1e-6, 'us'], [1e-3, 'ms'], [1, 's'], [60, 'min'], [3600, 'h']];
  const BYTES: Table = [[1, 'B'], [1e3, 'KB'], [1e6, 'MB'], [1e9, 'GB'], [1e12, 'TB']];
  const COUNTS: Table = [[1, ''], [1e3, 'k'], [1e6, 'M'], [1e9, 'B']];
  const label = (v: number, unit: CompareUnit, magnitude = v): string => {
    if (v === 0) return '0';
    const table = unit === 'seconds' ? SECONDS : unit === 'bytes' ? BYTES : COUNTS;
    let u = table[0];
    for (const t of table) if (Math.abs(magnitude) >= t[0] * 0.9999) u = t;
    // 100 s, not 1.67 min: minutes from two of them
    if (unit === 'seconds' && u[0] === 60 && Math.abs(magnitude) < 120) u = table[2];
    const x = v / u[0];
    const text = Math.abs(x) >= 100 ? x.toFixed(0) : String(Number(x.toPrecision(3)));
    const sep = unit === 'seconds' || unit === 'bytes' ? ' ' : '';
    return `${text}${sep}${u[1]}${unit === 'rate' ? '/s' : ''}`;
  };

  interface Scale {
    at(v: number): number;
    ticks: number[];
    tick(v: number): string;
  }

  const linear = (values: number[], unit: CompareUnit): Scale => {
    // room above the highest value, so that no dot sits on the frame
    const hi0 = Math.max(0, ...values) * 1.05;
    const hi1 = hi0 > 0 ? hi0 : 1;
    const raw = hi1 / 5;
    const p = 10 ** Math.floor(Math.log10(raw));
    let step = 10 * p;
    for (const m of [1, 2, 5]) if (m * p >= raw * 0.9999) { step = m * p; break; }
    const hi = Math.ceil(hi1 / step - 1e-9) * step;
    const ticks: number[] = [];
    for (let t = 0; t <= hi + step * 1e-6; t += step) ticks.push(Number(t.toPrecision(12)));
    return { at: (v) => v / hi, ticks, tick: (v) => label(v, unit, hi) };
  };

  const logarithmic = (values: number[], unit: CompareUnit): Scale => {
    const pos = values.filter((v) => v > 0);
    const lo = 10 ** Math.floor(Math.log10(pos.length ? Math.min(...pos) : 1) + 1e-9);
    let hi = 10 ** Math.ceil(Math.log10(pos.length ? Math.max(...pos) : 10) - 1e-9);
    if (hi <= lo) hi = lo * 10;
    const decades = Math.log10(hi / lo);
    const ticks: number[] = [];
    for (let e = Math.round(Math.log10(lo)); e <= Math.round(Math.log10(hi)); e += decades > 8 ? 2 : 1) {
      ticks.push(10 ** e);
      if (decades <= 2.5) ticks.push(2 * 10 ** e, 5 * 10 ** e);
    }
    const l = Math.log10(lo);
    return { at: (v) => (Math.log10(Math.max(v, lo)) - l) / (Math.log10(hi) - l), ticks: ticks.filter((t) => t >= lo * 0.999 && t <= hi * 1.001).map((t) => Number(t.toPrecision(12))), tick: (v) => label(v, unit) };
  };

  const text = (x: number, y: number, s: string, attrs = ''): string => `<text x="${f1(x)}" y="${f1(y)}" ${attrs}>${esc(s)}</text>`;
  const path = (d: string, attrs: string, title = ''): string => (title ? `<path d="${d}" ${attrs}><title>${esc(title)}</title></path>` : `<path d="${d}" ${attrs}/>`);

  function draw(el: HTMLElement, spec: CompareChartSpec): void {
    const values: number[] = [];
    for (const g of spec.groups) {
      if (g.measured !== null) values.push(g.measured * (1 - spec.band), g.measured * (1 + spec.band));
      for (const c of g.columns) {
        if (c.mean !== null) values.push(c.mean);
        for (const v of c.values) values.push(v.value);
      }
    }
    const finite = values.filter((v) => Number.isFinite(v) && (!spec.log || v > 0));
    const y = spec.log ? logarithmic(finite, spec.unit) : linear(finite, spec.unit);
    const bottom = TOP + H;
    const yPx = (v: number): number => bottom - Math.min(1, Math.max(0, y.at(v))) * H;
    const out: string[] = [];

    // the legend along the top: each side, and the band
    let lx = LEFT;
    for (const s of spec.sides) {
      out.push(`<rect x="${lx}" y="8" width="12" height="12" rx="2" fill="${s.color}"/>`, text(lx + 17, 18, s.label));
      lx += 30 + s.label.length * 6.6;
    }
    out.push(`<rect x="${f1(lx)}" y="8" width="22" height="12" fill="#17703a" fill-opacity="0.13" stroke="#17703a" stroke-opacity="0.4"/>`, text(lx + 27, 18, `±${Math.round(spec.band * 100)}% of measured`));

    for (const t of y.ticks) {
      out.push(`<line x1="${LEFT}" y1="${f1(yPx(t))}" x2="${PLOT_R}" y2="${f1(yPx(t))}" stroke="${GRID}"/>`);
      out.push(text(LEFT - 7, yPx(t) + 4, y.tick(t), 'text-anchor="end" class="tick"'));
    }
    out.push(`<rect x="${LEFT}" y="${TOP}" width="${PLOT_R - LEFT}" height="${H}" fill="none" stroke="#bbb"/>`);
    if (spec.log) out.push(text(LEFT + 4, TOP + 13, 'log scale', 'class="tick"'));

    const groupW = (PLOT_R - LEFT) / Math.max(1, spec.groups.length);
    spec.groups.forEach((g, gi) => {
      const x0 = LEFT + gi * groupW;
      const inner = Math.min(groupW * 0.8, 60 * g.columns.length + 40);
      const left = x0 + (groupW - inner) / 2;
      if (gi > 0) out.push(`<line x1="${f1(x0)}" y1="${TOP}" x2="${f1(x0)}" y2="${bottom}" stroke="#ccc" stroke-dasharray="2 3"/>`);
      if (g.measured !== null && g.measured > 0) {
        const top = yPx(g.measured * (1 + spec.band));
        const low = yPx(g.measured * (1 - spec.band));
        out.push(`<rect class="band" x="${f1(left)}" y="${f1(top)}" width="${f1(inner)}" height="${f1(Math.max(1, low - top))}" fill="#17703a" fill-opacity="0.13"><title>${esc(`±${Math.round(spec.band * 100)}% of measured: ${label(g.measured * (1 - spec.band), spec.unit)} to ${label(g.measured * (1 + spec.band), spec.unit)}`)}</title></rect>`);
      }
      const colW = inner / Math.max(1, g.columns.length);
      g.columns.forEach((c, ci) => {
        const cx = left + colW * (ci + 0.5);
        const color = spec.sides.find((s) => s.side === c.side)?.color ?? '#333';
        if (c.mean === null) {
          // written upwards from the bottom of the panel, inside it
          out.push(text(cx + 4, bottom - 8, c.missing ?? 'n/a', `text-anchor="start" transform="rotate(-90 ${f1(cx + 4)} ${f1(bottom - 8)})" class="note"`));
          return;
        }
        const vs = c.values.map((v) => v.value).filter((v) => Number.isFinite(v));
        if (vs.length > 1) {
          const lo = yPx(Math.min(...vs));
          const hi = yPx(Math.max(...vs));
          out.push(path(`M${f1(cx)},${f1(lo)}L${f1(cx)},${f1(hi)}M${f1(cx - 6)},${f1(lo)}L${f1(cx + 6)},${f1(lo)}M${f1(cx - 6)},${f1(hi)}L${f1(cx + 6)},${f1(hi)}`, `stroke="${color}" stroke-width="1.5" fill="none" class="range"`));
        }
        const my = yPx(c.mean);
        if (c.side === 'estimate') {
          out.push(path(`M${f1(cx)},${f1(my - 7)}L${f1(cx + 7)},${f1(my)}L${f1(cx)},${f1(my + 7)}L${f1(cx - 7)},${f1(my)}Z`, `fill="${color}" stroke="#fff" class="mean"`, c.title));
        } else {
          const half = Math.min(18, colW * 0.35);
          out.push(path(`M${f1(cx - half)},${f1(my)}L${f1(cx + half)},${f1(my)}`, `stroke="${color}" stroke-width="4" stroke-linecap="round" class="mean"`, c.title));
          c.values.forEach((v, i) => {
            const dx = c.values.length > 1 ? (i - (c.values.length - 1) / 2) * Math.min(7, (half * 2) / c.values.length) : 0;
            out.push(`<circle cx="${f1(cx + dx)}" cy="${f1(yPx(v.value))}" r="3.5" fill="${color}" fill-opacity="0.55" stroke="#fff" stroke-width="1"><title>${esc(`${v.label}: ${label(v.value, spec.unit)}`)}</title></circle>`);
          });
        }
      });
      const name = g.policy.length * 6.6 > groupW - 8 ? `${g.policy.slice(0, Math.max(4, Math.floor((groupW - 8) / 6.6) - 1))}…` : g.policy;
      out.push(`<g><title>${esc(g.policy)}</title>${text(x0 + groupW / 2, bottom + 17, name, 'text-anchor="middle"')}</g>`);
      out.push(text(x0 + groupW / 2, bottom + 34, g.verdict, `text-anchor="middle" fill="${VERDICT_COLORS[g.verdictClass] ?? '#333'}" class="strong"`));
    });
    const height = bottom + 44;
    el.innerHTML = `<svg viewBox="0 0 ${W} ${height}" role="img" aria-label="${esc(el.dataset.title ?? '')}">${out.join('')}</svg>`;
  }

  const source = document.getElementById('feedlab-compare-charts');
  const data = JSON.parse(source?.textContent || '{}') as Record<string, CompareChartSpec>;
  document.querySelectorAll<HTMLElement>('[data-compare-chart]').forEach((el) => {
    const spec = data[el.dataset.compareChart ?? ''];
    if (!spec) {
      el.textContent = `no data for chart "${el.dataset.compareChart ?? ''}"`;
      return;
    }
    draw(el, spec);
    el.dataset.rendered = 'true';
  });
}
