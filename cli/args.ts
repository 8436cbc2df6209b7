import { parseArgs, type ParseArgsConfig } from 'node:util';
import { InputError } from './errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** node:util parseArgs, with its errors turned into one-line usage errors naming the command. */
export function parseCommandArgs<O extends Options>(command: string, argv: string[], options: O, usage: string) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    const msg = (err as Error).message.replace(/\. To specify a positional argument.*$/s, '');
    throw new InputError(`${command}: ${msg} (usage: ${usage})`);
  }
}

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
