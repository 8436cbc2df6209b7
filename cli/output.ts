import { accessSync, constants, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { formatDuration } from '../sim/scenario/units.js';
import { InputError } from './errors.js';

/**
 * Refuse an output directory that cannot be written, before any long work: the nearest existing
 * ancestor must be a writable directory.
 */
export function checkOutputDir(dir: string): void {
  let p = resolve(dir);
  for (;;) {
    let st;
    try {
      st = statSync(p);
    } catch {
      const parent = dirname(p);
      if (parent === p) break;
      p = parent;
      continue;
    }
    if (!st.isDirectory()) throw new InputError(`--out ${dir}: ${p} is not a directory`);
    try {
      accessSync(p, constants.W_OK);
    } catch {
      throw new InputError(`--out ${dir}: ${p} is not writable`);
    }
    return;
  }
}

/** Write several files into a directory so that either all of them land or none does. */
export function writeReport(dir: string, files: Record<string, string>): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw new InputError(`--out ${dir}: ${(err as Error).message}`);
  }
  const staged: Array<[string, string]> = [];
  try {
    for (const [name, data] of Object.entries(files)) {
      const tmp = join(dir, `.${name}.${process.pid}.tmp`);
      writeFileSync(tmp, data);
      staged.push([tmp, join(dir, name)]);
    }
  } catch (err) {
    for (const [tmp] of staged) rmSync(tmp, { force: true });
    throw new InputError(`--out ${dir}: ${(err as Error).message}`);
  }
  for (const [tmp, path] of staged) renameSync(tmp, path);
}

/** Progress on stderr: one redrawn line on a TTY, a line every few seconds otherwise. */
export class Progress {
  private lastPrint = 0;
  private readonly started = Date.now();
  constructor(private readonly label: string, private readonly enabled = true) {}

  update(fraction: number, detail = ''): void {
    if (!this.enabled) return;
    const now = Date.now();
    const tty = process.stderr.isTTY;
    if (now - this.lastPrint < (tty ? 200 : 5000) && fraction < 1) return;
    this.lastPrint = now;
    const elapsed = (now - this.started) / 1000;
    const eta = fraction > 0.01 ? (elapsed / fraction) * (1 - fraction) : NaN;
    const pct = (fraction * 100).toFixed(0).padStart(3);
    const etaText = Number.isFinite(eta) ? ` ETA ${formatSeconds(eta)}` : '';
    const line = `${this.label} ${pct}% ${detail}${etaText}`;
    if (tty) process.stderr.write(`\r\x1b[2K${line}`);
    else process.stderr.write(line + '\n');
  }

  done(detail = ''): void {
    if (!this.enabled) return;
    const elapsed = (Date.now() - this.started) / 1000;
    const line = `${this.label} done in ${formatSeconds(elapsed)} ${detail}`.trimEnd();
    if (process.stderr.isTTY) process.stderr.write(`\r\x1b[2K${line}\n`);
    else process.stderr.write(line + '\n');
  }
}

/** The line on stderr after a run the user stopped: where, and where its partial report went. */
export function stoppedLine(stoppedAtSeconds: number, durationSeconds: number, out?: string): string {
  const where = `stopped at ${formatDuration(stoppedAtSeconds)} of ${formatDuration(durationSeconds)} simulated`;
  return `feedlab: ${where}; ${out ? `the partial report is in ${out}` : 'the report above is partial'} (exit 130)\n`;
}

export function formatSeconds(s: number): string {
  if (s < 60) return `${s.toFixed(1)}s`;
  // whole seconds first: 239.6 s is 4m0s, not 3m60s
  const whole = Math.round(s);
  const m = Math.floor(whole / 60);
  return `${m}m${whole - m * 60}s`;
}
