// Reading the server's and the workers' settings: a flag, else an environment variable, else the
// default, each checked with a one-line error that names where the bad value came from.
import { redactUrl } from '../core/service-url.js';

/** The event log a server or worker talks to. */
export type Bus = 'redis' | 'kafka';

/** Where one setting comes from: the flag, else the variable, else undefined. */
export interface Source {
  value: string | undefined;
  /** "--batch-size" or "FEED_BATCH_SIZE", for messages. */
  where: string;
}

export function pickSetting<F extends object>(flags: F, env: NodeJS.ProcessEnv, flag: (keyof F & string) | null, variable: string): Source {
  const f = flag ? flags[flag] : undefined;
  if (typeof f === 'string') return { value: f, where: `--${flag}` };
  const e = env[variable];
  if (e !== undefined && e.trim() !== '') return { value: e.trim(), where: variable };
  return { value: undefined, where: flag ? `--${flag}` : variable };
}

/** Typed readers that throw the caller's own configuration error. */
export class SettingsReader {
  constructor(private readonly fail: (message: string) => Error) {}

  integer(s: Source, dflt: number, min: number, max: number): number {
    if (s.value === undefined) return dflt;
    const m = /^(\d+(?:\.\d+)?)([kKmM]?)$/.exec(s.value.replace(/_/g, ''));
    const v = m ? Number(m[1]) * (m[2] === '' ? 1 : m[2].toLowerCase() === 'k' ? 1e3 : 1e6) : NaN;
    if (!Number.isSafeInteger(v) || v < min || v > max) throw this.fail(`${s.where}=${JSON.stringify(s.value)}: must be a whole number from ${min} to ${max}`);
    return v;
  }

  days(s: Source, dflt: number): number {
    if (s.value === undefined) return dflt;
    const v = Number(s.value);
    if (!/^\d+(\.\d+)?$/.test(s.value) || !(v > 0) || v > 3650) {
      throw this.fail(`${s.where}=${JSON.stringify(s.value)}: must be a number of days above 0 (e.g. 7 or 0.5), at most 3650`);
    }
    return v;
  }

  bool(flag: boolean | undefined, s: Source): boolean {
    if (flag === true) return true;
    if (s.value === undefined) return false;
    const v = s.value.toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(v)) return true;
    if (['0', 'false', 'no', 'off'].includes(v)) return false;
    throw this.fail(`${s.where}=${JSON.stringify(s.value)}: must be 1/true/yes/on or 0/false/no/off`);
  }

  url(s: Source, dflt: string, protocols: string[]): string {
    const v = s.value ?? dflt;
    let parsed: URL;
    try {
      parsed = new URL(v);
    } catch {
      throw this.fail(`${s.where}=${JSON.stringify(redactUrl(v))}: not a URL (expected ${protocols[0]}//...)`);
    }
    if (!protocols.includes(parsed.protocol)) {
      throw this.fail(`${s.where}=${JSON.stringify(redactUrl(v))}: must start with ${protocols.map((p) => p + '//').join(' or ')}`);
    }
    return v;
  }

  name(s: Source, dflt: string, pattern: RegExp, what: string): string {
    const v = s.value ?? dflt;
    if (!pattern.test(v)) throw this.fail(`${s.where}=${JSON.stringify(v.slice(0, 80))}: ${what}`);
    return v;
  }
}
