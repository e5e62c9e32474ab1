import { describe, expect, it } from 'vitest';
import { UpkeepReport } from './internal.ts';

const done = {
  lease_id: '6f1c1f3e-8f7a-4c53-9b1e-0d0c3c1b2a10',
  started_at: '2026-11-30T10:00:00.123456Z',
  seconds: 4.2,
  outcome: 'done',
  snapshot_ids: ['9223372036854775807', '42'],
  files: { data_before: 120, data_after: 4, manifests_before: 30, manifests_after: 2 },
  rewritten: { files: 118, bytes: 12_582_912, rows: 1_000_000 },
  expired_snapshots: 5,
  deleted_files: { data: 3, manifests: 4, manifest_lists: 5 },
  snapshots_kept: 20,
};
const nothing = {
  ...done,
  outcome: 'nothing',
  snapshot_ids: [],
  files: { data_before: 4, data_after: 4, manifests_before: 2, manifests_after: 2 },
  rewritten: { files: 0, bytes: 0, rows: 0 },
  expired_snapshots: 0,
  deleted_files: { data: 0, manifests: 0, manifest_lists: 0 },
};

/** The paths of the issues a body raises, or [] when it parses. */
const issues = (body: unknown) => {
  const parsed = UpkeepReport.safeParse(body);
  return parsed.success ? [] : parsed.error.issues.map((issue) => issue.path.join('.'));
};

describe('UpkeepReport', () => {
  it('takes a done, a nothing and a failed upkeep', () => {
    expect(issues(done)).toEqual([]);
    expect(issues(nothing)).toEqual([]);
    expect(issues({ ...nothing, outcome: 'failed', error: { code: 'catalog_unavailable', message: 'LoadTable: 503' } })).toEqual([]);
    // A failure after the compaction committed keeps what it did.
    expect(issues({ ...done, outcome: 'failed', error: { code: 'commit_conflict', message: 'expiry lost 5 races' } })).toEqual([]);
    // Expiry alone is done: it adds no snapshot.
    expect(issues({ ...nothing, outcome: 'done', expired_snapshots: 2, deleted_files: { data: 1, manifests: 1, manifest_lists: 2 } })).toEqual([]);
  });

  it('wants an error exactly when the upkeep failed', () => {
    expect(issues({ ...nothing, outcome: 'failed' })).toEqual(['error']);
    expect(issues({ ...done, error: { code: 'x', message: 'y' } })).toEqual(['error']);
    expect(issues({ ...nothing, outcome: 'failed', error: { code: 'Bad Code', message: 'y' } })).toEqual(['error.code']);
    expect(issues({ ...nothing, outcome: 'failed', error: { code: 'x', message: 'nul \u0000 inside' } })).toEqual(['error.message']);
    expect(issues({ ...nothing, outcome: 'failed', error: { code: 'x', message: '' } })).toEqual(['error.message']);
  });

  it('keeps done and nothing apart', () => {
    expect(issues({ ...nothing, outcome: 'done' })).toEqual(['outcome']);
    expect(issues({ ...nothing, snapshot_ids: ['7'], rewritten: done.rewritten })).toEqual(['snapshot_ids']);
    expect(issues({ ...nothing, expired_snapshots: 1 })).toEqual(['expired_snapshots']);
    expect(issues({ ...nothing, deleted_files: { data: 0, manifests: 0, manifest_lists: 1 } })).toEqual(['deleted_files']);
  });

  it('ties rewritten files to a committed snapshot, and bytes and rows to files', () => {
    expect(issues({ ...done, snapshot_ids: [] })).toEqual(['rewritten']);
    expect(issues({ ...done, rewritten: { files: 0, bytes: 10, rows: 0 } })).toEqual(['rewritten']);
  });

  it('refuses malformed fields', () => {
    expect(issues({ ...done, snapshot_ids: ['42', '42'] })).toEqual(['snapshot_ids']);
    expect(issues({ ...done, snapshot_ids: [42] })).toEqual(['snapshot_ids.0']);
    expect(issues({ ...done, snapshot_ids: ['9223372036854775808'] })).toEqual(['snapshot_ids.0']);
    expect(issues({ ...done, snapshot_ids: Array.from({ length: 11 }, (_, i) => String(i + 1)) })).toEqual(['snapshot_ids']);
    expect(issues({ ...done, started_at: 'yesterday' })).toEqual(['started_at']);
    expect(issues({ ...done, seconds: -1 })).toEqual(['seconds']);
    expect(issues({ ...done, files: { ...done.files, data_after: 1.5 } })).toEqual(['files.data_after']);
    expect(issues({ ...done, rewritten: { ...done.rewritten, extra: 1 } })).toEqual(['rewritten']);
    expect(issues({ ...done, extra: 1 })).toEqual(['']);
    const { snapshots_kept: _, ...missing } = done;
    expect(issues(missing)).toEqual(['snapshots_kept']);
  });
});
