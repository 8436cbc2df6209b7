// A numeric option's value, checked (commander parses the line: cli/program.ts).
import { availableParallelism } from 'node:os';
import { InputError } from './errors.js';

/** A numeric flag value, refused with a clear message when it is not a finite number in range. */
export function numberFlag(name: string, raw: string | undefined, fallback: number, opts: { min?: number; max?: number; integer?: boolean } = {}): number {
  if (raw === undefined) return fallback;
  const v = Number(raw);
  if (!Number.isFinite(v)) throw new InputError(`--${name} must be a number, got "${raw}"`);
  if (opts.integer && !Number.isInteger(v)) throw new InputError(`--${name} must be a whole number, got "${raw}"`);
  if (opts.min !== undefined && v < opts.min) throw new InputError(`--${name} must be at least ${opts.min}, got ${raw}`);
  if (opts.max !== undefined && v > opts.max) throw new InputError(`--${name} must be at most ${opts.max}, got ${raw}`);
  return v;
}

/** The most worker threads --threads takes. */
const MAX_THREADS = 256;

/** --threads of sweep, plan and graph generate: worker threads at once, the machine's cores when not given. */
export function threadsFlag(raw: string | undefined): number {
  return numberFlag('threads', raw, availableParallelism(), { min: 1, max: MAX_THREADS, integer: true });
}
