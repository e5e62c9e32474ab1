import type { Snapshot, TableMetadata } from '@tablemere/iceberg';
import { describe, expect, it } from 'vitest';
import { historyCovers, judgeIntent } from './invariant.ts';

const minute = 60_000;
const t0 = Date.parse('2026-09-21T12:00:00Z');

function snapshot(id: bigint, parent: bigint | null, at: number): Snapshot {
  return { 'snapshot-id': id, ...(parent === null ? {} : { 'parent-snapshot-id': parent }), 'timestamp-ms': at, 'manifest-list': `s3://w/t/metadata/${id}.avro`, summary: { operation: 'append' } };
}

function metadata(snapshots: Snapshot[], head: bigint | null): TableMetadata {
  return {
    'format-version': 2,
    'table-uuid': 'u',
    location: 's3://w/t',
    'last-updated-ms': t0,
    'last-column-id': 1,
    schemas: [],
    'current-schema-id': 0,
    'partition-specs': [],
    'default-spec-id': 0,
    snapshots,
    ...(head === null ? {} : { refs: { main: { 'snapshot-id': head, type: 'branch' } } }),
  };
}

const intent = (id: bigint, at: number) => ({ snapshot_id: id.toString(), created_at: new Date(at).toISOString() });

describe('judgeIntent', () => {
  it('finds a committed intent on main', () => {
    const m = metadata([snapshot(1n, null, t0), snapshot(2n, 1n, t0 + minute)], 2n);
    expect(judgeIntent(m, intent(1n, t0 - 1000), new Set())).toBe('committed');
  });

  it('finds a committed intent whose snapshot expired by the manifests the head still lists', () => {
    const m = metadata([snapshot(5n, 4n, t0 + 60 * minute)], 5n);
    expect(judgeIntent(m, intent(3n, t0), new Set([3n, 5n]))).toBe('committed');
  });

  it('abandons an intent the whole history shows never landed', () => {
    const m = metadata([snapshot(1n, null, t0 + minute), snapshot(2n, 1n, t0 + 2 * minute)], 2n);
    expect(judgeIntent(m, intent(9n, t0), new Set())).toBe('abandoned');
    expect(judgeIntent(metadata([], null), intent(9n, t0), new Set())).toBe('abandoned');
  });

  it('abandons when the kept history starts well before the intent', () => {
    const m = metadata([snapshot(7n, 6n, t0 - 30 * minute), snapshot(8n, 7n, t0 + minute)], 8n);
    expect(judgeIntent(m, intent(9n, t0), new Set())).toBe('abandoned');
  });

  it('cannot tell when the kept history starts after the intent', () => {
    const m = metadata([snapshot(7n, 6n, t0 + 5 * minute), snapshot(8n, 7n, t0 + 6 * minute)], 8n);
    expect(judgeIntent(m, intent(9n, t0), new Set())).toBe('unresolved');
  });

  it('abandons a snapshot rolled back off main', () => {
    const m = metadata([snapshot(1n, null, t0 - minute), snapshot(2n, 1n, t0 + minute)], 1n);
    expect(judgeIntent(m, intent(2n, t0), new Set())).toBe('abandoned');
  });
});

describe('historyCovers', () => {
  it('allows for clock skew', () => {
    const m = metadata([snapshot(7n, 6n, t0 - 5 * minute)], 7n);
    expect(historyCovers(m, t0)).toBe(false);
    expect(historyCovers(m, t0 + 5 * minute)).toBe(true);
  });
});
