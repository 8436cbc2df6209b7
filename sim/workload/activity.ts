// Per-user activity: how often each user posts and reads, and how many pages a session reads.
import type { Distribution, PagesPerSession } from '../scenario/types.js';
import type { Rng } from '../../core/random.js';

/** One user's posts per day drawn from the scenario's distribution (mean = the distribution's mean). */
export function drawDailyRate(dist: Distribution, rng: Rng): number {
  switch (dist.dist) {
    case 'constant':
      return dist.mean;
    case 'exponential':
      return rng.exponential(1 / dist.mean);
    case 'lognormal': {
      // mean = exp(mu + sigma^2 / 2)
      const mu = Math.log(dist.mean) - (dist.sigma * dist.sigma) / 2;
      return Math.exp(mu + dist.sigma * rng.normal());
    }
    case 'pareto': {
      // Lomax-free classic Pareto with mean = alpha xm / (alpha - 1)
      const xm = (dist.mean * (dist.alpha - 1)) / dist.alpha;
      return xm / Math.pow(rng.floatOpen(), 1 / dist.alpha);
    }
  }
}

export function meanPagesPerSession(p: PagesPerSession): number {
  let m = 0;
  for (const b of p.buckets) m += b.p * ((b.min + b.max) / 2);
  return m;
}

/** Draws a session's page count: a bucket by probability, then uniform within it. */
export class PagesSampler {
  private readonly cumulative: Float64Array;
  constructor(private readonly pages: PagesPerSession) {
    this.cumulative = new Float64Array(pages.buckets.length);
    let c = 0;
    pages.buckets.forEach((b, i) => {
      c += b.p;
      this.cumulative[i] = c;
    });
  }
  draw(rng: Rng): number {
    const u = rng.float() * this.cumulative[this.cumulative.length - 1];
    let i = 0;
    while (i < this.cumulative.length - 1 && u >= this.cumulative[i]) i++;
    const b = this.pages.buckets[i];
    return b.min === b.max ? b.min : b.min + rng.int(b.max - b.min + 1);
  }
}
