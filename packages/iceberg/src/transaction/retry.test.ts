import { describe, expect, it } from 'vitest';
import { backoffMs, DEFAULT_RETRY_POLICY } from './retry.ts';
import { newSnapshotId } from './snapshot-id.ts';

describe('retry backoff', () => {
  it('grows from the minimum to the cap, jittered within the upper half', () => {
    const policy = DEFAULT_RETRY_POLICY;
    expect(backoffMs(policy, 1, () => 0)).toBe(250);
    expect(backoffMs(policy, 1, () => 1)).toBe(500);
    expect(backoffMs(policy, 4, () => 1)).toBe(4000);
    expect(backoffMs(policy, 9, () => 1)).toBe(8000);
    expect(backoffMs(policy, 9, () => 0)).toBe(4000);
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
