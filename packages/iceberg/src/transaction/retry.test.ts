import { describe, expect, it } from 'vitest';
import { backoffMs, DEFAULT_RETRY_POLICY } from './retry.ts';
import { newSnapshotId } from './snapshot-id.ts';

describe('retry backoff', () => {
  it('is the description\'s policy: 5 attempts, 0.5–8 s between them', () => {
    const policy = DEFAULT_RETRY_POLICY;
    expect(policy.attempts).toBe(5);
    const retries = Array.from({ length: policy.attempts - 1 }, (_, i) => i + 1);
    expect(retries.map((r) => [backoffMs(policy, r, () => 0), backoffMs(policy, r, () => 1)])).toEqual([
      [500, 1000],
      [1000, 2000],
      [2000, 4000],
      [4000, 8000],
    ]);
    expect(backoffMs(policy, 9, () => 0)).toBe(8000);
    expect(backoffMs(policy, 9, () => 1)).toBe(8000);
  });
});

describe('snapshot ids', () => {
  it('are positive 63-bit values', () => {
    for (let i = 0; i < 1000; i++) {
      const id = newSnapshotId();
      expect(id > 0n && id < 1n << 63n).toBe(true);
    }
  });
});
