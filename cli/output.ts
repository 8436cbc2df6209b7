import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { checkDirs, makeDirs } from '../sim/make-dirs.js';
import { formatDuration } from '../sim/scenario/units.js';
import { InputError } from './errors.js';

/**
 * Refuse an output directory that cannot be made, before any long work: a file on the way, no
 * permission, /proc exit 2 at once rather than after the run. Nothing is left behind.
 */
export function checkOutputDir(dir: string): void {
  checkDirs(dir, `--out ${dir}`);
}

/** --junit FILE: refused before the work when its directory cannot be made. */
export function checkJunitFile(file: string | undefined): void {
  if (file !== undefined) checkDirs(dirname(resolve(file)), `--junit ${file}`);
}

/** Write --junit FILE whole (a temporary name renamed into place). */
export function writeJunit(file: string, xml: string): void {
  makeDirs(dirname(resolve(file)), `--junit ${file}`);
  const tmp = join(dirname(resolve(file)), `.${basename(file)}.${process.pid}.tmp`);
  try {
    writeFileSync(tmp, xml);
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw new InputError(`--junit ${file}: ${(err as Error).message}`);
  }
}

/** Write several files into a directory so that either all of them land or none does. */
export function writeReport(dir: string, files: Record<string, string>): void {
  makeDirs(dir, `--out ${dir}`);
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

/** Say on stderr where --out put the files (run, sweep, plan, compare); nothing without --out or with --quiet. */
export function sayWritten(values: { out?: string; quiet?: boolean }, files: Record<string, string>): void {
  if (values.out && !values.quiet) process.stderr.write(`feedlab: ${writtenLine(values.out, files)}\n`);
}

/** Where --out put the files, as the commands say it on stderr (`run --out` used to say nothing). */
export function writtenLine(dir: string, files: Record<string, string>): string {
  const names = Object.keys(files).filter((n) => n.startsWith('report.') || n === 'series.csv');
  const others = Object.keys(files).length - names.length;
  const rest = names.slice(1);
  const list = rest.length <= 1 ? rest.join('') : `${rest.slice(0, -1).join(', ')} and ${rest.at(-1)}`;
  return `report written to ${join(dir, names[0] ?? '')}${list ? `, ${list}` : ''}${others > 0 ? ` (and ${others} more file${others === 1 ? '' : 's'} beside them)` : ''}`;
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
