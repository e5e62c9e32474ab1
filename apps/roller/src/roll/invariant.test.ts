import { historyCovers, type Snapshot, type TableMetadata } from '@tablemere/iceberg';
import { describe, expect, it } from 'vitest';
import { metadataFixture } from '../../../../packages/iceberg/test/metadata-fixture.ts';
import { bareEvidence, type Evidence, judgeIntent, keptHistoryCovers, snapshotIn } from './invariant.ts';

const minute = 60_000;
const t0 = Date.parse('2026-09-21T12:00:00Z');

function snapshot(id: bigint, parent: bigint | null, at: number, summary: Record<string, string> = {}, sequence?: number): Snapshot {
  return {
    'snapshot-id': id,
    ...(parent === null ? {} : { 'parent-snapshot-id': parent }),
    ...(sequence === undefined ? {} : { 'sequence-number': sequence }),
    'timestamp-ms': at,
    'manifest-list': `s3://w/t/metadata/${id}.avro`,
    summary: { operation: 'append', ...summary },
  };
}

/** One version of the table: its snapshots, main's head, and the earlier versions it lists (oldest first). */
function metadata(snapshots: Snapshot[], head: bigint | null, log: Array<[at: number, file: string]> = []): TableMetadata {
  return metadataFixture(snapshots, head, t0, log);
}

function evidence(current: TableMetadata, earlier: Record<string, TableMetadata> = {}, live: bigint[] = []): Evidence {
  return { metadata: current, liveEntrySnapshots: new Set(live), earlier: new Map(Object.entries(earlier)) };
}

const intent = (id: bigint, at: number) => ({ snapshot_id: id.toString(), created_at: new Date(at).toISOString() });
const committedBy = (by: string) => ({ verdict: 'committed', by });
const abandonedBy = (by: string) => ({ verdict: 'abandoned', by });
const unresolved = { verdict: 'unresolved' };

/**
 * A sink's roll committed snapshot 3 at t0 + 1 min (intent at t0), on a table whose history
 * was kept since t0 - 60 min; then the owner compacted (delete 4, append 5) and expired all
 * but the head. v1..v4 are the metadata files of those versions.
 */
const s1 = snapshot(1n, null, t0 - 60 * minute);
const s2 = snapshot(2n, 1n, t0 - 30 * minute);
const s3 = snapshot(3n, 2n, t0 + minute, { 'tablemere.sink.id': 'snk', 'tablemere.sink.batches': 'b1,b2' });
const v1 = metadata([s1], 1n);
const v2 = metadata([s1, s2], 2n, [[t0 - 60 * minute, 'v1']]);
const v3 = metadata([s1, s2, s3], 3n, [[t0 - 60 * minute, 'v1'], [t0 - 30 * minute, 'v2']]);
const compacted = [s1, s2, s3, snapshot(4n, 3n, t0 + 2 * minute), snapshot(5n, 4n, t0 + 2 * minute)];
const v4 = metadata(compacted, 5n, [[t0 - 60 * minute, 'v1'], [t0 - 30 * minute, 'v2'], [t0 + minute, 'v3']]);
const expired = metadata([snapshot(5n, 4n, t0 + 2 * minute)], 5n, [[t0 - 60 * minute, 'v1'], [t0 - 30 * minute, 'v2'], [t0 + minute, 'v3'], [t0 + 2 * minute, 'v4']]);

describe('judgeIntent', () => {
  describe('on a catalog that serves the head alone, without its parent id (Nessie)', () => {
    // Our roll committed 3 (sequence 3) at t0 + 1 min; another writer's 4 (sequence 4) followed.
    const headOnly = metadata([snapshot(4n, null, t0 + 2 * minute, {}, 4)], 4n);

    it('never calls the parentless head a full history', () => {
      expect(historyCovers(headOnly, t0)).toBe(false);
      expect(judgeIntent(intent(3n, t0), bareEvidence(headOnly))).toEqual(unresolved);
    });

    it('settles the intent from a live entry of the head\'s manifests', () => {
      expect(judgeIntent(intent(3n, t0), evidence(headOnly, {}, [3n]))).toEqual(committedBy('manifest_entry'));
    });

    it('abandons an intent younger than the head\'s own snapshot time only when nothing came after', () => {
      const stale = metadata([snapshot(2n, null, t0 - 30 * minute, {}, 2)], 2n);
      expect(judgeIntent(intent(3n, t0), bareEvidence(stale))).toEqual(abandonedBy('ancestry'));
    });

    it('still takes a parentless first snapshot as the whole history', () => {
      const first = metadata([snapshot(4n, null, t0 + 2 * minute, {}, 1)], 4n);
      expect(judgeIntent(intent(3n, t0), bareEvidence(first))).toEqual(abandonedBy('ancestry'));
    });
  });

  it('rule 1: finds a committed intent on main', () => {
    const m = metadata([snapshot(1n, null, t0), snapshot(2n, 1n, t0 + minute)], 2n);
    expect(judgeIntent(intent(1n, t0 - 1000), bareEvidence(m))).toEqual(committedBy('ancestry'));
  });

  it('rule 2: finds a committed intent whose snapshot expired by a live entry of the head\'s manifests', () => {
    const m = metadata([snapshot(5n, 4n, t0 + 60 * minute)], 5n);
    expect(judgeIntent(intent(3n, t0), evidence(m, {}, [3n, 5n]))).toEqual(committedBy('manifest_entry'));
    expect(judgeIntent(intent(3n, t0), evidence(m, {}, [5n]))).toEqual(unresolved);
  });

  it('rule 3: finds a committed intent on main in an earlier metadata file after compaction and expiry', () => {
    expect(judgeIntent(intent(3n, t0), evidence(expired, { v1, v2, v3, v4 }))).toEqual(committedBy('metadata_log'));
    // The version that committed it is gone, a later one still has it on main's ancestry.
    expect(judgeIntent(intent(3n, t0), evidence(expired, { v4 }))).toEqual(committedBy('metadata_log'));
  });

  it('rule 3: a snapshot an earlier version knows but not on its main proves nothing', () => {
    const offMain = metadata([s1, s2, s3], 2n, [[t0 - 60 * minute, 'v1']]);
    const current = metadata([snapshot(5n, 4n, t0 + 2 * minute)], 5n, [[t0 - 60 * minute, 'v1'], [t0 - 30 * minute, 'v2'], [t0 + minute, 'v3'], [t0 + 2 * minute, 'v4']]);
    expect(judgeIntent(intent(3n, t0), evidence(current, { v3: offMain }))).toEqual(unresolved);
  });

  it('rule 4: abandons an intent the whole history shows never landed', () => {
    const m = metadata([snapshot(1n, null, t0 + minute), snapshot(2n, 1n, t0 + 2 * minute)], 2n);
    expect(judgeIntent(intent(9n, t0), bareEvidence(m))).toEqual(abandonedBy('ancestry'));
    expect(judgeIntent(intent(9n, t0), bareEvidence(metadata([], null)))).toEqual(abandonedBy('ancestry'));
  });

  it('rule 4: abandons when the kept history starts well before the intent', () => {
    const m = metadata([snapshot(7n, 6n, t0 - 30 * minute), snapshot(8n, 7n, t0 + minute)], 8n);
    expect(judgeIntent(intent(9n, t0), bareEvidence(m))).toEqual(abandonedBy('ancestry'));
  });

  it('rule 4: abandons a snapshot rolled back off main', () => {
    const m = metadata([snapshot(1n, null, t0 - minute), snapshot(2n, 1n, t0 + minute)], 1n);
    expect(judgeIntent(intent(2n, t0), bareEvidence(m))).toEqual(abandonedBy('ancestry'));
  });

  it('rule 4: abandons after expiry when an earlier version\'s ancestry covers the intent', () => {
    // The roll died after its intent (t0); the owner then expired everything but the head.
    expect(judgeIntent(intent(9n, t0), evidence(expired, { v1, v2, v3, v4 }))).toEqual(abandonedBy('metadata_log'));
    // The older versions may be gone: v4's ancestry alone reaches the table's first snapshot.
    expect(judgeIntent(intent(9n, t0), evidence(expired, { v4 }))).toEqual(abandonedBy('metadata_log'));
  });

  it('rule 4: abandons when metadata-log reaches back before the intent and every version since is readable', () => {
    const short = (head: bigint, at: number) => metadata([snapshot(head, head - 1n, at)], head);
    const current = metadata([snapshot(13n, 12n, t0 + 3 * minute)], 13n, [[t0 - 30 * minute, 'gone'], [t0 + minute, 'a'], [t0 + 2 * minute, 'b']]);
    // The oldest entry itself may be gone: only the versions written after it can hold the commit.
    expect(judgeIntent(intent(9n, t0), evidence(current, { a: short(11n, t0 + minute), b: short(12n, t0 + 2 * minute) }))).toEqual(abandonedBy('metadata_log'));
    // A version since the intent is gone: it may be the one that committed.
    expect(judgeIntent(intent(9n, t0), evidence(current, { b: short(12n, t0 + 2 * minute) }))).toEqual(unresolved);
    // The oldest entry is within the clock margin of the intent.
    const recent = metadata([snapshot(13n, 12n, t0 + 3 * minute)], 13n, [[t0 - 5 * minute, 'gone'], [t0 + minute, 'a'], [t0 + 2 * minute, 'b']]);
    expect(judgeIntent(intent(9n, t0), evidence(recent, { a: short(11n, t0 + minute), b: short(12n, t0 + 2 * minute) }))).toEqual(unresolved);
  });

  it('rule 4: never abandons without a history that covers the intent, whatever metadata-log lacks', () => {
    const head = [snapshot(5n, 4n, t0 + 2 * minute)];
    // No metadata-log at all.
    expect(judgeIntent(intent(9n, t0), bareEvidence(metadata(head, 5n)))).toEqual(unresolved);
    // One listed, but gone.
    expect(judgeIntent(intent(9n, t0), bareEvidence(metadata(head, 5n, [[t0 + minute, 'v']])))).toEqual(unresolved);
    // All gone.
    expect(judgeIntent(intent(9n, t0), bareEvidence(expired))).toEqual(unresolved);
    // Readable but short: no version's ancestry reaches back before the intent.
    const v = metadata([snapshot(4n, 3n, t0 + minute)], 4n);
    expect(judgeIntent(intent(9n, t0), evidence(metadata(head, 5n, [[t0 + minute, 'v']]), { v }))).toEqual(unresolved);
  });

  it('rule 5: leaves unresolved what the files no longer show', () => {
    expect(judgeIntent(intent(3n, t0), bareEvidence(expired))).toEqual(unresolved);
    const m = metadata([snapshot(7n, 6n, t0 + 5 * minute), snapshot(8n, 7n, t0 + 6 * minute)], 8n);
    expect(judgeIntent(intent(9n, t0), bareEvidence(m))).toEqual(unresolved);
  });

  it('closes an intent without a snapshot', () => {
    expect(judgeIntent({ snapshot_id: null, created_at: new Date(t0).toISOString() }, bareEvidence(v3))).toEqual(abandonedBy('no_snapshot'));
  });
});

describe('historyCovers', () => {
  it('allows for clock skew', () => {
    const m = metadata([snapshot(7n, 6n, t0 - 5 * minute)], 7n);
    expect(historyCovers(m, t0)).toBe(false);
    expect(historyCovers(m, t0 + 5 * minute)).toBe(true);
  });
});

describe('keptHistoryCovers', () => {
  it('covers with the version before the current written well before the intent', () => {
    const m = metadata([snapshot(5n, 4n, t0 + 2 * minute)], 5n, [[t0 - 20 * minute, 'gone']]);
    expect(keptHistoryCovers(bareEvidence(m), t0)).toBe(true);
  });

  it('does not walk past a malformed metadata-log entry', () => {
    const m = metadata([snapshot(5n, 4n, t0 + 2 * minute)], 5n, [[t0 - 60 * minute, 'v1'], [t0 + minute, 'a']]);
    const a = metadata([snapshot(4n, 3n, t0 + minute)], 4n);
    expect(keptHistoryCovers(evidence(m, { a }), t0)).toBe(true);
    (m['metadata-log'] as Array<Record<string, unknown>>)[0] = { 'metadata-file': 'v1' };
    expect(keptHistoryCovers(evidence(m, { a }), t0)).toBe(false);
  });
});

describe('snapshotIn', () => {
  it('finds an expired snapshot in the newest earlier version that has it', () => {
    expect(snapshotIn(evidence(expired, { v3, v4 }), 3n)?.summary['tablemere.sink.batches']).toBe('b1,b2');
    expect(snapshotIn(bareEvidence(expired), 3n)).toBeUndefined();
    expect(snapshotIn(bareEvidence(expired), 5n)?.['snapshot-id']).toBe(5n);
  });
});
