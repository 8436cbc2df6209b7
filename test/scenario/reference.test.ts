// docs/scenario-reference.md is written from the schema (sim/scenario/reference.ts): the committed
// file must be what the schema gives today, and it must name every key the shipped scenarios use.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { scenarioKeys, scenarioReference } from '../../sim/scenario/reference.js';

const ROOT = join(import.meta.dirname, '../..');

describe('the scenario reference', () => {
  it('is the committed docs/scenario-reference.md (after a schema change: npm run docs)', () => {
    expect(readFileSync(join(ROOT, 'docs/scenario-reference.md'), 'utf8')).toBe(scenarioReference());
  });

  it('has a type, a meaning and (where the key may be left out) its default for every key', () => {
    const rows = scenarioKeys();
    expect(rows.length).toBeGreaterThan(100);
    for (const r of rows) {
      expect(r.type, r.key).not.toBe('');
      expect(r.description.length, r.key).toBeGreaterThan(3);
    }
    const row = (k: string) => rows.find((r) => r.key === `\`${k}\``);
    expect(row('policy.threshold')).toMatchObject({ dflt: '`25000`' });
    expect(row('infrastructure.costs.rtt')).toMatchObject({ type: 'duration, >= 0', dflt: '`0.3ms`' });
    expect(row('duration')?.type).toBe('duration, > 0, <= 366 d');
  });

  it("names every key of every shipped scenario", () => {
    const keys = new Set(scenarioKeys().map((r) => r.key.slice(1, -1)));
    const missing: string[] = [];
    const visit = (value: unknown, path: string): void => {
      if (Array.isArray(value)) {
        for (const v of value) visit(v, `${path}[]`);
        return;
      }
      if (value === null || typeof value !== 'object') return;
      for (const [k, v] of Object.entries(value)) {
        const direct = path ? `${path}.${k}` : k;
        // a map whose keys are data (page ranges, quantiles, idle times) has one row for all of them
        const data = [...keys].find((x) => x.startsWith(`${path}.<`) && !x.slice(path.length + 2).includes('.'));
        const at = keys.has(direct) ? direct : data;
        if (!at) missing.push(direct);
        else visit(v, at);
      }
    };
    const dir = join(ROOT, 'scenarios');
    for (const f of readdirSync(dir).filter((x) => x.endsWith('.yaml'))) visit(parse(readFileSync(join(dir, f), 'utf8')), '');
    expect(missing).toEqual([]);
  });
});
