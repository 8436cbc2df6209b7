// Durations recorded into an HDR histogram (microseconds, 3 significant digits), with exact sums
// for the mean so that results can be held against closed forms.
import * as hdr from 'hdr-histogram-js';
import { LARGE_WRITES_PER_TIMELINES } from '../../core/fanout-worker.js';

export interface DurationSummary {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
}

export class DurationRecorder {
  private readonly histogram = hdr.build({ bitBucketSize: 64, autoResize: true, numberOfSignificantValueDigits: 3 });
  private weightSum = 0;
  private weightedSum = 0;
  private maxSeen = 0;

  /** Record `seconds` with a weight (how many real posts or deliveries the sample stands for). */
  record(seconds: number, weight = 1): void {
    const us = Math.max(0, Math.round(seconds * 1e6));
    const count = Math.max(1, Math.round(weight));
    this.histogram.recordValueWithCount(us, count);
    this.weightSum += weight;
    this.weightedSum += seconds * weight;
    if (seconds > this.maxSeen) this.maxSeen = seconds;
  }

  get count(): number {
    return this.weightSum;
  }

  percentile(p: number): number {
    return this.histogram.totalCount === 0 ? 0 : this.histogram.getValueAtPercentile(p) / 1e6;
  }

  summary(): DurationSummary {
    const empty = this.histogram.totalCount === 0;
    return {
      count: this.weightSum,
      mean: empty ? 0 : this.weightedSum / this.weightSum,
      p50: this.percentile(50),
      p90: this.percentile(90),
      p99: this.percentile(99),
      p999: this.percentile(99.9),
      max: this.maxSeen,
    };
  }

  /** The histogram in HdrHistogram's compressed form, mergeable across runs and processes. */
  encoded(): string {
    return hdr.encodeIntoCompressedBase64(this.histogram);
  }
}

/**
 * Per-interval percentiles for time series: log buckets, 8 per octave (~9% resolution),
 * one small row per interval. Cheap enough to keep for every simulated minute.
 */
export class IntervalHistograms {
  static readonly BUCKETS = 8 * 44;
  private readonly counts: Float64Array;
  constructor(readonly intervals: number) {
    this.counts = new Float64Array(intervals * IntervalHistograms.BUCKETS);
  }

  record(interval: number, seconds: number, weight: number): void {
    if (interval < 0 || interval >= this.intervals) return;
    const us = seconds * 1e6;
    const b = us < 1 ? 0 : Math.min(IntervalHistograms.BUCKETS - 1, 1 + Math.floor(Math.log2(us) * 8));
    this.counts[interval * IntervalHistograms.BUCKETS + b] += weight;
  }

  /** The upper edge of the bucket holding percentile p of an interval, in seconds (0 when empty). */
  percentile(interval: number, p: number): number {
    const base = interval * IntervalHistograms.BUCKETS;
    let total = 0;
    for (let b = 0; b < IntervalHistograms.BUCKETS; b++) total += this.counts[base + b];
    if (total === 0) return 0;
    const target = (total * p) / 100;
    let acc = 0;
    for (let b = 0; b < IntervalHistograms.BUCKETS; b++) {
      acc += this.counts[base + b];
      if (acc >= target) return b === 0 ? 1e-6 : Math.pow(2, b / 8) / 1e6;
    }
    return Math.pow(2, (IntervalHistograms.BUCKETS - 1) / 8) / 1e6;
  }
}

/**
 * A large post's writes as worker and model record them, scaled to LARGE_WRITES_PER_TIMELINES of its
 * timelines (core/fanout-worker.ts), per timeline; NaN (null in the JSON) without a large post,
 * never a made-up 0.
 */
export function perTimeline<T extends Omit<DurationSummary, 'count'> & { count?: number }>(s: T): T {
  const k = s.count === 0 ? NaN : LARGE_WRITES_PER_TIMELINES;
  return { ...s, mean: s.mean / k, p50: s.p50 / k, p90: s.p90 / k, p99: s.p99 / k, p999: s.p999 / k, max: s.max / k };
}
