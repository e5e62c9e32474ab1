import { describe, expect, it } from 'vitest';
import type { FileIO } from '../io/file-io.ts';
import type { Snapshot, TableMetadata } from '../spec/metadata.ts';
import { writeManifestList } from '../writer/manifest-list.ts';
import { manifestFileFixture, metadataFixture } from '../../test/metadata-fixture.ts';
import { CLOCK_MARGIN_MS, landed, snapshotAttemptLanded } from './landed.ts';

const minute = 60_000;
const t0 = Date.parse('2026-12-01T12:00:00Z');

function snapshot(id: bigint, parent: bigint | null, at: number, list = `s3://w/t/metadata/snap-${id}.avro`): Snapshot {
  return {
    'snapshot-id': id,
    ...(parent === null ? {} : { 'parent-snapshot-id': parent }),
    'sequence-number': Number(id),
    'timestamp-ms': at,
    'manifest-list': list,
    summary: { operation: 'append' },
  };
}

function table(snapshots: Snapshot[], head: bigint): TableMetadata {
  return metadataFixture(snapshots, head, t0);
}

/** A store holding one manifest list: the head's, naming manifests added by `addedBy`. */
function store(list: string, addedBy: bigint[]): FileIO {
  const manifests = addedBy.map((id, i) => manifestFileFixture(`s3://w/t/metadata/m${i}.avro`, 100, { added_snapshot_id: id }));
  const bytes = writeManifestList({ snapshotId: 9n, parentSnapshotId: null, sequenceNumber: 9n, manifests });
  return {
    get: async (location) => {
      if (location !== list) throw new Error(`no ${location}`);
      return bytes;
    },
    put: async () => undefined,
    delete: async () => undefined,
    exists: async (location) => location === list,
  };
}

describe('landed', () => {
  // Main: 1 (t0 - 60 min, the first) <- 2 (t0 + 1 min, ours, list "a2").
  const full = table([snapshot(1n, null, t0 - 60 * minute), snapshot(2n, 1n, t0 + minute, 'a2')], 2n);

  it('is landed when main has the snapshot, not landed when main\'s history covers the time since, else unknown', () => {
    expect(landed(full, 2n, t0)).toBe('landed');
    expect(landed(full, 3n, t0)).toBe('not_landed');
    // Only the head kept, younger than the start less the margin: nothing can tell.
    const cut = table([snapshot(5n, 4n, t0 + 2 * minute)], 5n);
    expect(landed(cut, 3n, t0)).toBe('unknown');
    // The same head, but within the clock margin before the start: still unknown; older: covered.
    expect(landed(table([snapshot(5n, 4n, t0 - CLOCK_MARGIN_MS + minute)], 5n), 3n, t0)).toBe('unknown');
    expect(landed(table([snapshot(5n, 4n, t0 - CLOCK_MARGIN_MS)], 5n), 3n, t0)).toBe('not_landed');
  });

  it('tells the attempts of one snapshot apart by their manifest list', async () => {
    const io = store('unused', []);
    expect(await snapshotAttemptLanded(io, full, { snapshotId: 2n, manifestList: 'a2' }, t0)).toBe('landed');
    expect(await snapshotAttemptLanded(io, full, { snapshotId: 2n, manifestList: 'a1' }, t0)).toBe('not_landed');
    expect(await snapshotAttemptLanded(io, full, { snapshotId: 3n, manifestList: 'a1' }, t0)).toBe('not_landed');
  });

  it('reads the head\'s manifest list when the history is cut: a manifest the snapshot added shows it landed', async () => {
    const cut = table([snapshot(5n, 4n, t0 + 2 * minute, 'head')], 5n);
    expect(await snapshotAttemptLanded(store('head', [5n, 3n]), cut, { snapshotId: 3n, manifestList: 'a1' }, t0)).toBe('landed');
    expect(await snapshotAttemptLanded(store('head', [5n]), cut, { snapshotId: 3n, manifestList: 'a1' }, t0)).toBe('unknown');
  });
});
