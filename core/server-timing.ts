// The one Server-Timing metric the reference server sends and the replay reads (W3C Server Timing:
// `name;dur=milliseconds`): how long after a post's creation its author's recent list held it. A
// pulled author's post is delivered to every follower from then, which no poll from outside can
// time closer than the 201's arrival (sim/replay/fanout-probe.ts).

/** The metric's name on a 201 to POST /v1/posts. */
export const LISTED_TIMING = 'listed';

/** A Server-Timing header value for one metric: `name;dur=ms` (ms to the microsecond). */
export function serverTiming(name: string, ms: number): string {
  return `${name};dur=${Math.max(0, ms).toFixed(3)}`;
}

/** The `listed` time of a 201's Server-Timing header value (undefined: no header, or no such metric). */
export function listedAfterMs(header: string | undefined): number | undefined {
  return header === undefined ? undefined : serverTimingDuration(header, LISTED_TIMING);
}

/** The `dur` of metric `name` in a Server-Timing header value (metrics separated by commas), or undefined. */
export function serverTimingDuration(header: string, name: string): number | undefined {
  for (const metric of header.split(',')) {
    const [metricName, ...params] = metric.split(';').map((p) => p.trim());
    if (metricName.toLowerCase() !== name) continue;
    for (const p of params) {
      const m = /^dur\s*=\s*"?([0-9]+(?:\.[0-9]+)?)"?$/i.exec(p);
      if (m) return Number(m[1]);
    }
  }
  return undefined;
}
