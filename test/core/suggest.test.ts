import { expect, test } from 'vitest';
import { editDistance, nearest } from '../../core/suggest.js';

test('edit distance counts adjacent swaps as one edit', () => {
  expect(editDistance('fanoutWorker', 'fanoutWorkers')).toBe(1);
  expect(editDistance('celebirties', 'celebrities')).toBe(1);
  expect(editDistance('kitten', 'sitting')).toBe(3);
  expect(editDistance('', 'abc')).toBe(3);
  expect(editDistance('same', 'same')).toBe(0);
});

test('nearest picks the closest key, ignoring case, and nothing when all are far', () => {
  const keys = ['fanoutWorkers', 'writesPerSecondPerWorker', 'batchSize', 'redisShards'];
  expect(nearest('fanoutWorker', keys)).toBe('fanoutWorkers');
  expect(nearest('FanoutWorkers', keys)).toBe('fanoutWorkers');
  expect(nearest('redisShard', keys)).toBe('redisShards');
  expect(nearest('memory', keys)).toBeUndefined();
  // Short words need a short distance: "x" is not a typo of "at".
  expect(nearest('x', ['at'])).toBeUndefined();
  expect(nearest('aT', ['at'])).toBe('at');
});
