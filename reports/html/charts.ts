// The chart code of report.html. It runs in the browser: the page inlines this function's source
// (`drawCharts.toString()`), so the function must stay self-contained: no imports at run time and
// no reference to anything outside its own body. It reads the chart specs (spec.ts) from the JSON
// block `#feedlab-charts`, draws each `[data-chart]` container as SVG, and marks it
// `data-rendered="true"`.
import type { AxisSpec, ChartData, ChartSpec, PanelSpec, Unit } from './spec.js';

export function drawCharts(): void {
  const W = 900; // viewBox width; the SVG scales to its container
  const LEFT = 78; // y tick labels and the y axis title
  const RIGHT = 190; // direct labels of lines and reference lines
  const PLOT_R = W - RIGHT;
  const CHAR = 6.4; // average width of a 12px character, for laying out labels
  const LABEL_CHARS = 30;
  const GRID = '#e3e3e3';

  const esc = (s: string): string => s.replace(/[&<>"]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&quot;'));
  const num = (v: number, decimals: number): string => {
    const t = v.toFixed(Math.max(0, Math.min(6, decimals)));
    return t.includes('.') ? t.replace(/\.?0+$/, '') : t;
  };

  // ---- units -------------------------------------------------------------------------------
  type UnitTable = Array<[number, string]>;
  const SECONDS: UnitTable = [[1e-6, 'us'], [1e-3, 'ms'], [1, 's'], [60, 'min'], [3600, 'h'], [86400, 'd']];
  const BYTES: UnitTable = [[1, 'B'], [1e3, 'KB'], [1e6, 'MB'], [1e9, 'GB'], [1e12, 'TB'], [1e15, 'PB']];
  const COUNTS: UnitTable = [[1, ''], [1e3, 'k'], [1e6, 'M'], [1e9, 'B'], [1e12, 'T']];
  const pick = (table: UnitTable, magnitude: number): [number, string] => {
    let u = table[0];
    for (const t of table) if (Math.abs(magnitude) >= t[0] * 0.9999) u = t;
    return u;
  };
  const decimalsFor = (step: number): number => (step >= 1 ? 0 : Math.ceil(-Math.log10(step) - 1e-9));
  const sup = (e: number): string => (e < 0 ? '⁻' : '') + String(Math.abs(e)).split('').map((c) => '⁰¹²³⁴⁵⁶⁷⁸⁹'[Number(c)]).join('');

  /** Simulated time from the start: 45 s, 30 min, 1 h, 1 h 30. */
  const clock = (s: number): string => {
    if (s < 60) return `${num(s, 1)} s`;
    if (s < 3600) return `${num(s / 60, 1)} min`;
    const h = Math.floor(s / 3600 + 1e-9);
    const m = Math.round((s - h * 3600) / 60);
    return m === 0 ? `${h} h` : `${h} h ${String(m).padStart(2, '0')}`;
  };

  /** A tick label: the unit chosen from `magnitude`, the decimals from the tick step (in that unit). */
  const tickLabel = (v: number, unit: Unit, step: number, magnitude: number): string => {
    if (v === 0) return '0';
    if (unit === 'time') return clock(v);
    if (unit === 'share') {
      const pct = v * 100;
      if (pct < 0.001) return `10${sup(Math.round(Math.log10(v)))}`;
      return `${num(pct, decimalsFor(step * 100))}%`;
    }
    const table = unit === 'seconds' ? SECONDS : unit === 'bytes' ? BYTES : COUNTS;
    // counts in each tick's own unit (500, 1k, 1.5k); bytes and seconds in one unit per axis
    const [size, name] = pick(table, unit === 'count' ? v : magnitude);
    const sep = unit === 'count' ? '' : ' ';
    return `${num(v / size, decimalsFor(step / size))}${sep}${name}`;
  };

  /** A value in a tooltip or a label: three significant digits in the value's own unit. */
  const valueLabel = (v: number, unit: Unit): string => {
    if (!Number.isFinite(v)) return '–';
    if (v === 0) return '0';
    if (unit === 'time') return clock(v);
    if (unit === 'share') return `${(v * 100).toPrecision(3).replace(/\.?0+$/, '')}%`;
    const table = unit === 'seconds' ? SECONDS : unit === 'bytes' ? BYTES : COUNTS;
    const [size, name] = pick(table, v);
    const x = v / size;
    const text = Math.abs(x) >= 100 ? x.toFixed(0) : x.toPrecision(3).replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
    return `${text}${unit === 'count' ? '' : ' '}${name}`;
  };

  // ---- scales ------------------------------------------------------------------------------
  interface Scale {
    lo: number;
    hi: number;
    log: boolean;
    ticks: number[];
    step: number;
    unit: Unit;
    at(v: number): number; // 0..1 along the axis
    label(v: number): string;
  }

  const TIME_STEPS = [30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];
  const niceStep = (span: number, target: number, unit: Unit): number => {
    const raw = span / target;
    if ((unit === 'time' || unit === 'seconds') && raw >= 20) {
      for (const s of TIME_STEPS) if (s >= raw) return s;
      return Math.ceil(raw / 86400) * 86400;
    }
    const p = 10 ** Math.floor(Math.log10(raw));
    for (const m of [1, 2, 5]) if (m * p >= raw * 0.9999) return m * p;
    return 10 * p;
  };

  const linearScale = (values: number[], axis: AxisSpec, zeroDefault: boolean, target: number): Scale => {
    let lo = axis.domain ? axis.domain[0] : Math.min(...values);
    let hi = axis.domain ? axis.domain[1] : Math.max(...values);
    if (!axis.domain && (axis.zero ?? zeroDefault)) lo = Math.min(0, lo);
    if (!(hi > lo)) hi = lo === 0 ? 1 : lo + Math.abs(lo);
    let step = niceStep(hi - lo, target, axis.unit);
    if (axis.unit === 'count' && hi - lo >= 1) step = Math.max(1, step);
    if (!axis.domain) {
      lo = Math.floor(lo / step + 1e-9) * step;
      hi = Math.ceil(hi / step - 1e-9) * step;
    }
    const ticks: number[] = [];
    for (let t = Math.ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-6; t += step) ticks.push(Number(t.toPrecision(12)));
    // seconds: the unit of the step (0.5 ms, 1 ms ... ; 30 s, 60 s ... ; 5 min, 10 min ...)
    const magnitude = axis.unit !== 'seconds' ? Math.max(Math.abs(lo), Math.abs(hi)) : step >= 1 ? step : step * 10;
    return { lo, hi, log: false, ticks, step, unit: axis.unit, at: (v) => (v - lo) / (hi - lo), label: (v) => tickLabel(v, axis.unit, step, magnitude) };
  };

  const SECOND_LOG_TICKS = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1, 10, 60, 600, 3600, 36000, 86400, 864000];
  /** `pad`: the data plus a margin (an x axis, whose points must not sit on the frame); else whole decades. */
  const logScale = (values: number[], axis: AxisSpec, pad: boolean): Scale => {
    const pos = values.filter((v) => v > 0);
    let lo = pos.length ? Math.min(...pos) : 1;
    let hi = pos.length ? Math.max(...pos) : 10;
    if (pad) {
      const margin = 10 ** Math.max(0.08, Math.log10(hi / lo) * 0.04);
      lo /= margin;
      hi *= margin;
    } else {
      lo = 10 ** Math.floor(Math.log10(lo) + 1e-9);
      hi = 10 ** Math.ceil(Math.log10(hi) - 1e-9);
      if (hi <= lo) hi = lo * 10;
    }
    const decades = Math.log10(hi / lo);
    let ticks: number[];
    if (axis.unit === 'seconds') ticks = SECOND_LOG_TICKS.filter((t) => t >= lo * 0.999 && t <= hi * 1.001);
    else {
      ticks = [];
      const every = decades > 8 ? 2 : 1;
      for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e += every) {
        ticks.push(10 ** e);
        if (decades <= 2.5) ticks.push(2 * 10 ** e, 5 * 10 ** e);
      }
      ticks = ticks.filter((t) => t >= lo * 0.999 && t <= hi * 1.001).map((t) => Number(t.toPrecision(12)));
    }
    const l = Math.log10(lo);
    const span = Math.log10(hi) - l;
    return {
      lo,
      hi,
      log: true,
      ticks,
      step: 0,
      unit: axis.unit,
      at: (v) => (Math.log10(Math.max(v, lo)) - l) / span,
      label: (v) => (axis.unit === 'share' || axis.unit === 'time' ? tickLabel(v, axis.unit, v, v) : valueLabel(v, axis.unit)),
    };
  };

  const scaleFor = (values: number[], axis: AxisSpec, isX: boolean, target: number): Scale =>
    axis.log ? logScale(values, axis, isX) : linearScale(values.length ? values : [0], axis, !isX, target);

  // ---- drawing -----------------------------------------------------------------------------
  const text = (x: number, y: number, s: string, attrs = ''): string => `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" ${attrs}>${esc(s)}</text>`;
  const line = (x1: number, y1: number, x2: number, y2: number, attrs: string): string =>
    `<line x1="${x1.toFixed(1)}" y1="${y1.toFixed(1)}" x2="${x2.toFixed(1)}" y2="${y2.toFixed(1)}" ${attrs}/>`;
  const clip = (s: string, n = LABEL_CHARS): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

  interface Label {
    /** Where the line is; `y` is moved to keep labels apart. */
    at: number;
    y: number;
    text: string;
    color: string;
    dash: string;
    title: string;
  }

  /** Direct labels in the right margin, nudged apart so that none overlaps. */
  const placeLabels = (labels: Label[], top: number, bottom: number): string => {
    const gap = 14;
    const sorted = [...labels].sort((a, b) => a.y - b.y);
    for (let i = 1; i < sorted.length; i++) sorted[i].y = Math.max(sorted[i].y, sorted[i - 1].y + gap);
    const over = sorted.length ? sorted[sorted.length - 1].y - (bottom + 4) : 0;
    if (over > 0) for (const l of sorted) l.y -= over;
    for (let i = sorted.length - 2; i >= 0; i--) sorted[i].y = Math.min(sorted[i].y, sorted[i + 1].y - gap);
    if (sorted.length && sorted[0].y < top) {
      const shift = top - sorted[0].y;
      for (const l of sorted) l.y += shift;
    }
    // a short stroke in the line's colour and dash beside each label, joined to the line's end by a leader
    return sorted
      .map((l) => {
        const leader = Math.abs(l.y - l.at) > 2 ? line(PLOT_R + 1, l.at, PLOT_R + 6, l.y, 'stroke="#999" stroke-width="0.8"') : '';
        const swatch =
          l.dash === 'dot'
            ? `<circle cx="${PLOT_R + 14}" cy="${l.y.toFixed(1)}" r="3.5" fill="${l.color}"/>`
            : line(PLOT_R + 6, l.y, PLOT_R + 22, l.y, `stroke="${l.color}" stroke-width="2.5"${l.dash ? ` stroke-dasharray="${l.dash}"` : ''}`);
        return `<g class="end-label"><title>${esc(l.title)}</title>${leader}${swatch}${text(PLOT_R + 26, l.y + 4, clip(l.text))}</g>`;
      })
      .join('');
  };

  const dashOf = (style: string | undefined): string => (style === 'dashed' ? ' stroke-dasharray="6 4"' : '');

  interface PanelGeom {
    top: number;
    bottom: number;
    panel: PanelSpec;
    y: Scale;
    /** Every drawn line in pixels (series and reference lines), for labels to keep off them. */
    lines: Array<Array<[number, number]>>;
  }

  /** Whether any of the lines crosses the box [x0, x1] x [y0, y1] (pixels). */
  function crosses(lines: PanelGeom['lines'], x0: number, x1: number, y0: number, y1: number): boolean {
    for (const pts of lines) {
      for (let i = 0; i < pts.length; i++) {
        const [bx, by] = pts[i];
        const [ax, ay] = i === 0 ? pts[i] : pts[i - 1];
        const lo = Math.max(Math.min(ax, bx), x0);
        const hi = Math.min(Math.max(ax, bx), x1);
        if (lo > hi) continue;
        // the segment's y over the part of it inside [x0, x1]
        const at = (xx: number) => (bx === ax ? ay : ay + ((by - ay) * (xx - ax)) / (bx - ax));
        const ya = at(lo);
        const yb = bx === ax ? by : at(hi);
        if (Math.max(ya, yb) >= y0 && Math.min(ya, yb) <= y1) return true;
      }
    }
    return false;
  }

  function drawPanel(p: PanelSpec, x: Scale, top: number, h: number, xPx: (v: number) => number, out: string[]): PanelGeom {
    const bottom = top + h;
    const values: number[] = [];
    for (const s of p.series) for (const v of s.y) if (Number.isFinite(v)) values.push(v);
    for (const hl of p.highlights ?? []) values.push(hl.y);
    const dataMax = values.length ? Math.max(...values) : 0;
    const notes: string[] = [];
    const drawnRefs = p.refs.filter((r) => {
      if (!Number.isFinite(r.value)) return false;
      if (r.fit === 'include' || p.y.log || dataMax <= 0 || r.value <= 4 * dataMax) {
        values.push(r.value);
        return true;
      }
      notes.push(`↑ ${r.label}: off scale, ${num(r.value / dataMax, r.value / dataMax >= 10 ? 0 : 1)}× the peak`);
      return false;
    });
    const y = scaleFor(values, p.y, false, Math.max(3, Math.round(h / 45)));
    const yPx = (v: number): number => bottom - y.at(v) * h;

    out.push(text(LEFT, top - 10, p.title, 'class="panel-title"'));
    for (const t of y.ticks) {
      const py = yPx(t);
      out.push(line(LEFT, py, PLOT_R, py, `stroke="${GRID}"`));
      out.push(text(LEFT - 7, py + 4, y.label(t), 'text-anchor="end" class="tick"'));
    }
    for (const t of x.ticks) out.push(line(xPx(t), top, xPx(t), bottom, `stroke="${GRID}"`));
    out.push(`<rect x="${LEFT}" y="${top}" width="${PLOT_R - LEFT}" height="${h}" fill="none" stroke="#bbb"/>`);
    out.push(text(16, top + h / 2, p.y.label, `transform="rotate(-90 16 ${(top + h / 2).toFixed(1)})" text-anchor="middle" class="axis-title"`));

    const labels: Label[] = [];
    const lines: PanelGeom['lines'] = [];
    for (const r of drawnRefs) {
      const py = yPx(r.value);
      lines.push([
        [LEFT, py],
        [PLOT_R, py],
      ]);
      out.push(line(LEFT, py, PLOT_R, py, `stroke="${r.color}" stroke-width="${r.width ?? 1.5}" stroke-dasharray="${r.dash ?? '8 4'}" class="ref"`));
      labels.push({ at: py, y: py, text: r.label, color: r.color, dash: r.dash ?? '8 4', title: `${r.label}: ${valueLabel(r.value, p.y.unit)}` });
    }
    for (const s of p.series) {
      const pts: Array<[number, number, number]> = [];
      for (let i = 0; i < s.x.length; i++) if (Number.isFinite(s.y[i]) && Number.isFinite(s.x[i])) pts.push([xPx(s.x[i]), yPx(s.y[i]), i]);
      if (pts.length === 0) continue;
      lines.push(pts.map(([px, py]) => [px, py]));
      const style = s.style ?? 'line';
      // One point (a one-minute run) makes no line: it is drawn as a dot instead.
      const dots = style === 'points' || style === 'linepoints' || pts.length === 1;
      if (style !== 'points' && pts.length > 1) {
        const d = pts.map(([px, py], i) => `${i === 0 ? 'M' : 'L'}${px.toFixed(1)},${py.toFixed(1)}`).join('');
        out.push(`<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2" stroke-linejoin="round"${dashOf(style)} class="series"/>`);
      }
      if (dots) {
        for (const [px, py, i] of pts) {
          const title = s.titles?.[i] ?? `${s.label}: ${valueLabel(s.y[i], p.y.unit)}`;
          out.push(`<circle cx="${px.toFixed(1)}" cy="${py.toFixed(1)}" r="3.5" fill="${s.color}" stroke="#fff" stroke-width="1"><title>${esc(title)}</title></circle>`);
        }
      }
      if (s.endLabel !== false) {
        const last = pts[pts.length - 1];
        labels.push({ at: last[1], y: last[1], text: s.label, color: s.color, dash: style === 'dashed' ? '6 4' : style === 'points' ? 'dot' : '', title: s.label });
      }
    }
    for (const hl of p.highlights ?? []) {
      const px = xPx(hl.x);
      const py = yPx(hl.y);
      out.push(`<circle cx="${px.toFixed(1)}" cy="${py.toFixed(1)}" r="8" fill="none" stroke="${hl.color}" stroke-width="2.5" class="highlight"/>`);
      const right = px + 12 + hl.label.length * CHAR < PLOT_R;
      out.push(text(right ? px + 12 : px - 12, py - 10, hl.label, `fill="${hl.color}" text-anchor="${right ? 'start' : 'end'}" class="halo strong"`));
    }
    // off-scale lines are noted on the title's row, at the right, where no data is drawn
    if (notes.length) out.push(text(W - 8, top - 10, notes.join('; '), 'text-anchor="end" class="note"'));
    out.push(placeLabels(labels, top, bottom));
    return { top, bottom, panel: p, y, lines };
  }

  function drawChart(el: HTMLElement, spec: ChartSpec): void {
    const xs: number[] = [];
    for (const p of spec.panels) for (const s of p.series) for (const v of s.x) if (Number.isFinite(v)) xs.push(v);
    for (const p of spec.panels) for (const hl of p.highlights ?? []) xs.push(hl.x);
    const x = scaleFor(xs, spec.x, true, 8);
    const xPx = (v: number): number => LEFT + x.at(v) * (PLOT_R - LEFT);
    const out: string[] = [];
    const geoms: PanelGeom[] = [];
    let cursor = 30;
    spec.panels.forEach((p) => {
      const h = p.height ?? 190;
      geoms.push(drawPanel(p, x, cursor, h, xPx, out));
      cursor += h + 44;
    });
    const bottom = geoms[geoms.length - 1].bottom;
    for (const t of x.ticks) out.push(text(xPx(t), bottom + 17, x.label(t), 'text-anchor="middle" class="tick"'));
    out.push(text((LEFT + PLOT_R) / 2, bottom + 38, spec.x.label, 'text-anchor="middle" class="axis-title"'));

    // vertical markers across every panel, labelled at the top of the first (or the bottom of the
    // last), in rows that do not overlap; a label that would cover a line there goes to the other end
    const rowsEnd: Record<'top' | 'bottom', number[]> = { top: [], bottom: [] };
    const preferred = spec.markerLabels ?? 'top';
    for (const m of spec.markers) {
      if (m.x < x.lo || m.x > x.hi) continue;
      const px = xPx(m.x);
      for (const g of geoms) out.push(line(px, g.top, px, g.bottom, 'stroke="#7a4fa0" stroke-width="1.5" stroke-dasharray="3 3" class="marker"'));
      const width = m.label.length * CHAR + 8;
      const anchorEnd = px + width > PLOT_R;
      const x0 = anchorEnd ? px - width : px;
      const place = (side: 'top' | 'bottom') => {
        const rows = rowsEnd[side];
        let row = 0;
        while (row < rows.length && rows[row] > x0) row++;
        const ty = side === 'bottom' ? bottom - 8 - row * 15 : geoms[0].top + 14 + row * 15;
        const g = side === 'bottom' ? geoms[geoms.length - 1] : geoms[0];
        return { side, row, ty, free: !crosses(g.lines, x0, x0 + width, ty - 11, ty + 3) };
      };
      const first = place(preferred);
      const other = first.free ? first : place(preferred === 'top' ? 'bottom' : 'top');
      const chosen = first.free || !other.free ? first : other;
      rowsEnd[chosen.side][chosen.row] = x0 + width + 4;
      const ty = chosen.ty;
      out.push(`<g><title>${esc(m.detail)}</title>${text(anchorEnd ? px - 4 : px + 4, ty, m.label, `text-anchor="${anchorEnd ? 'end' : 'start'}" fill="#5b2d86" class="marker-label halo"`)}</g>`);
    }

    const H = bottom + 48;
    const cross = spec.crosshair
      ? `<line class="crosshair" x1="0" y1="${geoms[0].top}" x2="0" y2="${bottom}" stroke="#555" stroke-width="1" visibility="hidden"/><rect class="hover" x="${LEFT}" y="${geoms[0].top}" width="${PLOT_R - LEFT}" height="${bottom - geoms[0].top}" fill="transparent"/>`
      : '';
    el.innerHTML = `<svg viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(el.dataset.title ?? '')}">${out.join('')}${cross}</svg><div class="tip" hidden></div>`;
    // a right-margin label wider than the margin (the font is the reader's) is shortened to fit
    el.querySelectorAll<SVGTextElement>('g.end-label text').forEach((t) => {
      const room = W - 4 - Number(t.getAttribute('x'));
      let s = t.textContent ?? '';
      while (s.length > 4 && t.getComputedTextLength() > room) {
        s = s.slice(0, -1);
        t.textContent = `${s.trimEnd()}…`;
      }
    });
    if (spec.crosshair) attachCrosshair(el, spec, x, H, (px) => x.lo + ((px - LEFT) / (PLOT_R - LEFT)) * (x.hi - x.lo), xPx, geoms);
  }

  /** Hover: a vertical line and every series' value at the nearest x. */
  function attachCrosshair(el: HTMLElement, spec: ChartSpec, x: Scale, H: number, fromPx: (px: number) => number, xPx: (v: number) => number, geoms: PanelGeom[]): void {
    const svg = el.querySelector('svg');
    const hover = el.querySelector<SVGRectElement>('rect.hover');
    const cross = el.querySelector<SVGLineElement>('line.crosshair');
    const tip = el.querySelector<HTMLDivElement>('div.tip');
    if (!svg || !hover || !cross || !tip) return;
    hover.addEventListener('mousemove', (ev) => {
      const box = svg.getBoundingClientRect();
      const v = fromPx(((ev.clientX - box.left) * W) / box.width);
      const rows: string[] = [];
      let at = v;
      for (const g of geoms) {
        for (const s of g.panel.series) {
          let best = -1;
          for (let i = 0; i < s.x.length; i++) if (best < 0 || Math.abs(s.x[i] - v) < Math.abs(s.x[best] - v)) best = i;
          if (best < 0) continue;
          at = s.x[best];
          rows.push(`<div><span class="swatch" style="background:${s.color}"></span>${esc(s.label)}: <b>${esc(valueLabel(s.y[best], g.panel.y.unit))}</b></div>`);
        }
      }
      const px = xPx(at);
      cross.setAttribute('x1', px.toFixed(1));
      cross.setAttribute('x2', px.toFixed(1));
      cross.setAttribute('visibility', 'visible');
      tip.innerHTML = `<div class="tip-head">${esc(spec.x.label)}: ${esc(valueLabel(at, x.unit))}</div>${rows.join('')}`;
      tip.hidden = false;
      const scale = box.width / W;
      const left = px * scale + 14;
      tip.style.left = `${left + tip.offsetWidth > box.width ? px * scale - 14 - tip.offsetWidth : left}px`;
      tip.style.top = `${((geoms[0].top + 8) * box.height) / H}px`;
    });
    hover.addEventListener('mouseleave', () => {
      cross.setAttribute('visibility', 'hidden');
      tip.hidden = true;
    });
  }

  const source = document.getElementById('feedlab-charts');
  const data = JSON.parse(source?.textContent || '{}') as ChartData;
  document.querySelectorAll<HTMLElement>('[data-chart]').forEach((el) => {
    const name = el.dataset.chart ?? '';
    const spec = data[name];
    if (!spec) {
      el.textContent = `no data for chart "${name}"`;
      return;
    }
    drawChart(el, spec);
    el.dataset.rendered = 'true';
  });
}
