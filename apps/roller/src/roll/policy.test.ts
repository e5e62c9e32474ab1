import { describe, expect, it } from 'vitest';
import { selectBatches } from './policy.ts';

const now = new Date('2026-09-21T12:00:00Z');

describe('selectBatches', () => {
  const at = (s: number) => new Date(now.getTime() + s * 1000);
  const object = (key: string, size: number, second: number) => ({ key, size, lastModified: at(second) });

  it('takes the oldest first, ties by key', () => {
    const listed = [object('c', 1, 3), object('b', 1, 1), object('a', 1, 1), object('d', 1, 2)];
    expect(selectBatches(listed, { maxBatches: 10, maxBytes: 100 }).map((o) => o.key)).toEqual(['a', 'b', 'd', 'c']);
  });

  it('stops at maxBatches', () => {
    const listed = Array.from({ length: 1500 }, (_, i) => object(`k${String(i).padStart(4, '0')}`, 1, i));
    const taken = selectBatches(listed, { maxBatches: 1000, maxBytes: 1 << 30 });
    expect(taken).toHaveLength(1000);
    expect(taken.at(-1)!.key).toBe('k0999');
  });

  it('stops before maxBytes would be passed, but always takes one batch', () => {
    const listed = [object('a', 40, 1), object('b', 40, 2), object('c', 20, 3)];
    expect(selectBatches(listed, { maxBatches: 10, maxBytes: 100 }).map((o) => o.key)).toEqual(['a', 'b', 'c']);
    expect(selectBatches(listed, { maxBatches: 10, maxBytes: 79 }).map((o) => o.key)).toEqual(['a']);
    expect(selectBatches([object('huge', 500, 1)], { maxBatches: 10, maxBytes: 100 }).map((o) => o.key)).toEqual(['huge']);
  });
});
