// A row of block characters for a series: a picture in a terminal or a Markdown code span.
const BLOCKS = '▁▂▃▄▅▆▇█';

/** Columns of a sparkline unless told otherwise. */
export const SPARKLINE_WIDTH = 60;

/** How many of a series' steps one column of its sparkline covers (the widest column, when they differ). */
export function stepsPerColumn(length: number, width = SPARKLINE_WIDTH): number {
  return length <= width ? 1 : Math.ceil(length / width);
}

export function sparkline(values: number[], width = SPARKLINE_WIDTH): string {
  if (values.length === 0) return '';
  // downsample by taking the max of each bucket, so spikes survive
  const buckets = Math.min(width, values.length);
  const out: number[] = [];
  for (let b = 0; b < buckets; b++) {
    const lo = Math.floor((b * values.length) / buckets);
    const hi = Math.max(lo + 1, Math.floor(((b + 1) * values.length) / buckets));
    let m = -Infinity;
    for (let i = lo; i < hi; i++) if (values[i] > m) m = values[i];
    out.push(m);
  }
  // a column without a finite value (a figure not measured there: null in a JSON document) is blank
  const seen = out.filter((v) => Number.isFinite(v));
  if (seen.length === 0) return ' '.repeat(out.length);
  const max = Math.max(...seen);
  const min = Math.min(0, ...seen);
  const block = (v: number) => (!Number.isFinite(v) ? ' ' : max <= min ? BLOCKS[0] : BLOCKS[Math.min(7, Math.floor(((v - min) / (max - min)) * 7.999))]);
  return out.map(block).join('');
}
