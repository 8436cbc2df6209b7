// The server benchmark's cpu per read (bench/server-loops.ts perRead): one serving process's share,
// or the sum of several serving together (the two instances), turned into µs a read at the rate.
import { describe, expect, it } from 'vitest';
import { disturbance, perRead } from '../../bench/server-loops.js';
import type { CpuShare } from '../../sim/replay/cpu.js';

const share = (processes: Record<string, number>): CpuShare =>
  ({ generator: 15, server: processes.server ?? 0, processes, redis: 30, postgres: 2, other: 1, idle: 40, wallSeconds: 5 }) as CpuShare;

describe('cpu per read', () => {
  it('of one serving process: its % of a core over the rate', () => {
    // 100% of a core at 2,000 reads/s is 500 µs a read; Redis's 30% is 150 µs, Postgres's 2% 10 µs
    expect(perRead(share({ server: 100 }), 2_000)).toBe('cpu per read: server 500 µs, redis 150 µs, postgres 10 µs');
  });

  it('of several serving together: their sum, named together', () => {
    expect(perRead(share({ server: 70, 'server 2': 60, bare: 99 }), 2_600, ['server', 'server 2'])).toBe(
      'cpu per read: server + server 2 500 µs, redis 115 µs, postgres 8 µs',
    );
  });

  it('of a process the meter did not see: 0, not NaN', () => {
    expect(perRead(share({ server: 100 }), 1_000, 'bare')).toBe('cpu per read: bare 0 µs, redis 300 µs, postgres 20 µs');
  });

  it('flags a measurement disturbed by a quarter of a core or more of other processes', () => {
    expect(disturbance(24.9)).toBe('');
    expect(disturbance(25)).toBe(' (disturbed: other processes took 25% of a core during it)');
  });
});
