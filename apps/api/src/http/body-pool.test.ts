import { describe, expect, it, vi } from 'vitest';
import { BodyPool } from './body-pool.ts';

describe('BodyPool', () => {
  it('hands out views of exactly the asked size and reuses a given-back slab', () => {
    const pool = new BodyPool(1024, 2, 100);
    const first = pool.take(300);
    expect(first.length).toBe(300);
    const slab = first.buffer;
    pool.give(first);
    expect(pool.idle).toBe(1);
    const second = pool.take(1024);
    expect(second.length).toBe(1024);
    expect(second.buffer).toBe(slab);
    expect(pool.idle).toBe(0);
  });

  it('allocates small and oversized bodies plainly and never keeps them', () => {
    const pool = new BodyPool(1024, 2, 100);
    const small = pool.take(99);
    const big = pool.take(2000);
    expect([small.length, big.length]).toEqual([99, 2000]);
    pool.give(small);
    pool.give(big);
    expect(pool.idle).toBe(0);
  });

  it('keeps at most `keep` idle slabs, and a slab given back twice only once', () => {
    const pool = new BodyPool(1024, 2, 100);
    const taken = [pool.take(500), pool.take(500), pool.take(500)];
    expect(new Set(taken.map((b) => b.buffer)).size).toBe(3);
    pool.give(taken[0]!);
    pool.give(taken[0]!);
    expect(pool.idle).toBe(1);
    pool.give(taken[1]!);
    pool.give(taken[2]!);
    expect(pool.idle).toBe(2);
    // Two takes get two different slabs.
    expect(pool.take(500).buffer).not.toBe(pool.take(500).buffer);
  });

  it('lets its idle slabs go once no large body came for a while', () => {
    vi.useFakeTimers();
    try {
      const pool = new BodyPool(1024, 2, 100, 1_000);
      const [a, b] = [pool.take(500), pool.take(500)];
      pool.give(a);
      vi.advanceTimersByTime(900);
      pool.give(b);
      vi.advanceTimersByTime(900);
      expect(pool.idle).toBe(2);
      vi.advanceTimersByTime(200);
      expect(pool.idle).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
