import { mkdirSync, renameSync, writeFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Write a file atomically: a temporary sibling, then rename, so no reader ever sees half a file. */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = join(dirname(path), `.${Date.now()}.${process.pid}.tmp`);
  try {
    writeFileSync(tmp, data);
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
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

function formatSeconds(s: number): string {
  if (s < 60) return `${s.toFixed(1)}s`;
  const m = Math.floor(s / 60);
  return `${m}m${Math.round(s - m * 60)}s`;
}
