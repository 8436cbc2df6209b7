// Figures and inputs for people: human-scaled with their unit (17.4k/s, 384 GB, 36 min).
import { formatBytes, formatCount, formatDuration } from '../scenario/units.js';
import type { FigureUnit } from './figures.js';
import type { InputUnit } from './inputs.js';

export function formatFigure(value: number, unit: FigureUnit | InputUnit): string {
  if (!Number.isFinite(value)) return String(value);
  switch (unit) {
    case 'per-second':
    case 'writes/s':
    case 'requests/s':
      return `${formatCount(value)}/s`;
    case 'per-day':
      return `${formatCount(value)}/day`;
    case 'bytes':
      return formatBytes(value);
    case 'bytes/day':
      return `${formatBytes(value)}/day`;
    case 'bytes/year':
      return `${formatBytes(value)}/year`;
    case 'seconds':
      return value === 0 ? '0 s' : formatDuration(value);
    case 'share':
      return `${Number((value * 100).toPrecision(3))}%`;
    case 'ratio':
    case 'factor':
      return `${Number(value.toPrecision(3))}x`;
    case 'users':
    case 'count':
      return formatCount(value);
  }
}
