import { describe, expect, it } from 'vitest';
import { dueReasons, selectBatches } from './policy.ts';

const policy = { roll_seconds: 300, roll_bytes: 64 * 1024 * 1024, inactivity_seconds: null, max_batches: 1000 as const };
const now = new Date('2026-09-21T12:00:00Z');
const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000).toISOString();
const pending = (over: Partial<{ batches: number; bytes: number; oldest: string | null; newest: string | null }> = {}) => ({
  batches: over.batches ?? 1,
  bytes: over.bytes ?? 100,
  oldest_received_at: over.oldest === undefined ? ago(10) : over.oldest,
  newest_received_at: over.newest === undefined ? ago(10) : over.newest,
});

describe('dueReasons', () => {
  it('is never due with nothing pending', () => {
    expect(dueReasons(policy, { batches: 0, bytes: 0, oldest_received_at: null, newest_received_at: null }, now)).toEqual([]);
  });

  it('waits roll_seconds from the oldest batch, inclusive', () => {
    expect(dueReasons(policy, pending({ oldest: ago(299) }), now)).toEqual([]);
    expect(dueReasons(policy, pending({ oldest: ago(300) }), now)).toEqual(['roll_seconds']);
  });

  it('rolls at roll_bytes and at 1,000 batches', () => {
    expect(dueReasons(policy, pending({ bytes: 64 * 1024 * 1024 - 1 }), now)).toEqual([]);
    expect(dueReasons(policy, pending({ bytes: 64 * 1024 * 1024 }), now)).toEqual(['roll_bytes']);
    expect(dueReasons(policy, pending({ batches: 999 }), now)).toEqual([]);
    expect(dueReasons(policy, pending({ batches: 1000 }), now)).toEqual(['max_batches']);
  });

  it('rolls a quiet sink after inactivity_seconds from the newest batch, only when set', () => {
    const quiet = { ...policy, inactivity_seconds: 30 };
    expect(dueReasons(policy, pending({ newest: ago(3000), oldest: ago(100) }), now)).toEqual([]);
    expect(dueReasons(quiet, pending({ newest: ago(29), oldest: ago(100) }), now)).toEqual([]);
    expect(dueReasons(quiet, pending({ newest: ago(30), oldest: ago(100) }), now)).toEqual(['inactivity']);
  });

  it('names every rule that holds', () => {
    const quiet = { ...policy, inactivity_seconds: 30 };
    expect(dueReasons(quiet, pending({ batches: 1000, bytes: 1 << 30, oldest: ago(400), newest: ago(400) }), now)).toEqual([
      'roll_seconds',
      'roll_bytes',
      'max_batches',
      'inactivity',
    ]);
  });
});

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
