// Service-level objectives checked against a simulation's summary.
import type { Slo } from './scenario/types.js';

export interface SloCheck {
  id: 'fanoutLagP99' | 'readP99' | 'redisMemory';
  description: string;
  target: number;
  actual: number;
  unit: 's' | 'ms' | 'bytes';
  pass: boolean;
}

export interface SloVerdict {
  pass: boolean;
  checks: SloCheck[];
}

export function checkSlo(slo: Slo, observed: { lagP99Seconds: number; readP99Ms: number; peakMemoryBytes: number }): SloVerdict {
  const checks: SloCheck[] = [
    {
      id: 'fanoutLagP99',
      description: 'fan-out lag p99, per follower',
      target: slo.fanoutLagP99,
      actual: observed.lagP99Seconds,
      unit: 's',
      pass: observed.lagP99Seconds <= slo.fanoutLagP99,
    },
    {
      id: 'readP99',
      description: 'home-feed read p99',
      target: slo.readP99 * 1000,
      actual: observed.readP99Ms,
      unit: 'ms',
      pass: observed.readP99Ms <= slo.readP99 * 1000,
    },
  ];
  if (Number.isFinite(slo.redisMemory)) {
    checks.push({
      id: 'redisMemory',
      description: 'peak Redis memory for timelines and lists',
      target: slo.redisMemory,
      actual: observed.peakMemoryBytes,
      unit: 'bytes',
      pass: observed.peakMemoryBytes <= slo.redisMemory,
    });
  }
  return { pass: checks.every((c) => c.pass), checks };
}
