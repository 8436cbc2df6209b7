import { parseArgs, type ParseArgsConfig } from 'node:util';
import { InputError } from './errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;

const NEGATIVE_NUMBER = /^-(\d|\.\d)/;

/**
 * An option that takes a value followed by a negative number (`--growth -1`, `-n -2`) is joined
 * into `--growth=-1`: node:util parseArgs would otherwise take the number for an option and refuse
 * the line as ambiguous. The value then meets the option's own check ("--growth must be ...").
 */
export function joinNegativeValues(argv: string[], options: Options): string[] {
  const out: string[] = [];
  const valueOption = (token: string): string | null => {
    if (token.startsWith('--') && !token.includes('=')) {
      const name = token.slice(2);
      return options[name]?.type === 'string' ? name : null;
    }
    if (/^-[^-]$/.test(token)) {
      const entry = Object.entries(options).find(([, o]) => o.short === token[1]);
      return entry && entry[1].type === 'string' ? entry[0] : null;
    }
    return null;
  };
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i];
    if (token === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const name = valueOption(token);
    const next = argv[i + 1];
    if (name !== null && next !== undefined && NEGATIVE_NUMBER.test(next)) {
      out.push(`--${name}=${next}`);
      i++;
    } else out.push(token);
  }
  return out;
}

/** node:util parseArgs, with its errors turned into one-line usage errors naming the command. */
export function parseCommandArgs<O extends Options>(command: string, argv: string[], options: O, usage: string) {
  try {
    return parseArgs({ args: joinNegativeValues(argv, options), options, allowPositionals: true, strict: true });
  } catch (err) {
    const msg = (err as Error).message
      .replace(/\. To specify a positional argument.*$/s, '')
      .replace(/\s*\n\s*/g, ' ')
      .trim();
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
