import type { Sink } from '@tablemere/contracts';
import { describe, expect, it } from 'vitest';
import { describeLag, describeLastUpkeep, describeRoll, sinkDetails, sinkTable } from './sink-view.ts';

const now = new Date('2026-09-21T12:00:00Z');
const sink: Sink = {
  id: 'snk_0123456789ab',
  name: 'events_in',
  warehouse: 'garden',
  table: 'garden.events',
  table_uuid: '5f0c6c1e-0000-4000-8000-000000000000',
  partition: [],
  state: 'active',
  ingest_url: 'http://127.0.0.1:8787/v1/sinks/snk_0123456789ab',
  roll: { roll_seconds: 300, roll_bytes: 64 * 1024 * 1024, inactivity_seconds: null, max_batches: 1000 },
  unknown_fields: 'reject',
  linger_ms: 0,
  batch_ids: 'key',
  lag: { batches_waiting: 2, bytes_waiting: 1_258_291, oldest_waiting_at: '2026-09-21T11:59:18Z', seconds_behind: 42 },
  received: { batches: 14, rows: 1_000_000, bytes: 206_464_204, last_at: '2026-09-21T11:59:50Z' },
  last_roll: { at: '2026-09-21T11:57:00Z', batches: 4, rows: 12_000, rejected_rows: 3, snapshot_id: '2157400381618988528', seconds: 1.84 },
  roll_error: null,
  rejects: { rows_total: 3, batches_with_rejects: 1, last_at: '2026-09-21T11:57:00Z', prefix: 's3://intake/_sink/snk_0123456789ab/rejects/' },
  upkeep: {
    keep_snapshots: 20,
    min_snapshot_age_seconds: 600,
    last_run: {
      at: '2026-09-21T11:00:00.000Z',
      outcome: 'done',
      seconds: 4.21,
      files_before: 120,
      files_after: 4,
      manifests_before: 30,
      manifests_after: 2,
      expired_snapshots: 5,
      rewritten_bytes: 12 * 1024 * 1024,
      snapshots_kept: 20,
      orphan_files_deleted: 0,
      error: null,
    },
  },
  key_rotation: { rotated_at: null, old_key_stops_at: null },
  created_at: '2026-09-21T10:00:00Z',
  deleted_at: null,
};

describe('sink views', () => {
  it('puts the roll policy and the lag in words', () => {
    expect(describeRoll(sink.roll)).toBe('every 5 min, or once 64.0 MiB wait, or at 1,000 batches');
    expect(describeRoll({ ...sink.roll, roll_seconds: 90, roll_bytes: 48 * 1024 * 1024, inactivity_seconds: 20 })).toBe(
      'every 1 min 30 s, or once 48.0 MiB wait, or after 20 s without a batch, or at 1,000 batches',
    );
    expect(describeLag(sink.lag)).toBe('2 batches (1.2 MiB), 42 s behind');
    expect(describeLag({ batches_waiting: 0, bytes_waiting: 0, oldest_waiting_at: null, seconds_behind: 0 })).toBe('nothing');
  });

  it('shows a sink as labelled lines', () => {
    expect(sinkDetails(sink, now)).toEqual([
      'sink events_in (snk_0123456789ab)',
      '  table        garden.events in warehouse garden',
      '  state        active',
      '  ingest URL   http://127.0.0.1:8787/v1/sinks/snk_0123456789ab',
      '  roll         every 5 min, or once 64.0 MiB wait, or at 1,000 batches',
      '  new fields   rows carrying them are rejected (reject)',
      '  intake       sends written at once, together when they arrive together',
      '  batch ids    by Idempotency-Key, required (key)',
      '  waiting      2 batches (1.2 MiB), 42 s behind',
      '  received     14 batches, 1,000,000 rows, 196.9 MiB; last 10 s ago',
      '  last roll    3 min ago: 4 batches, 12,000 rows, 3 rows rejected, snapshot 2157400381618988528, took 1.8 s',
      '  rejects      3 rows in 1 batch, last 3 min ago; see: tablemere sink rejects events_in',
      '  snapshots    keep 20, none younger than 10 min',
      '  last upkeep  1 h ago: done, data files 120 -> 4, manifests 30 -> 2, 12.0 MiB rewritten, 5 snapshots expired, 20 kept, took 4.2 s',
      '  created      2026-09-21 10:00:00Z (2 h ago)',
    ]);
    const fresh = sinkDetails(
      { ...sink, last_roll: null, rejects: { ...sink.rejects, rows_total: 0 }, upkeep: { keep_snapshots: 3, min_snapshot_age_seconds: 0, last_run: null }, state: 'deleted', deleted_at: '2026-09-21T11:59:00Z' },
      now,
    );
    expect(fresh).toContain('  last roll    none yet');
    expect(sinkDetails({ ...sink, unknown_fields: 'add_columns' }, now)).toContain('  new fields   added to the table as optional columns (add_columns)');
    expect(sinkDetails({ ...sink, linger_ms: 250 }, now)).toContain('  intake       sends wait up to 250 ms to share an object');
    expect(sinkDetails({ ...sink, batch_ids: 'content' }, now)).toContain("  batch ids    by Idempotency-Key, else by the body's content (content)");
    expect(fresh).toContain('  rejects      none');
    expect(fresh).toContain('  last upkeep  none yet');
    expect(fresh).toContain('  snapshots    keep 3, no minimum age');
    const orphans = sinkDetails({ ...sink, upkeep: { ...sink.upkeep, last_run: { ...sink.upkeep.last_run!, orphan_files_deleted: 2 } } }, now);
    expect(orphans).toContain('  last upkeep  1 h ago: done, data files 120 -> 4, manifests 30 -> 2, 12.0 MiB rewritten, 5 snapshots expired, 20 kept, 2 orphan files deleted, took 4.2 s');
    expect(fresh.at(-1)).toBe('  deleted      2026-09-21 11:59:00Z (1 min ago)');
  });

  it('says when a rotated key was rotated and when its old key stops', () => {
    const rotating = sinkDetails({ ...sink, key_rotation: { rotated_at: '2026-09-21T11:55:00Z', old_key_stops_at: '2026-09-22T11:55:00Z' } }, now);
    expect(rotating[4]).toBe('  send key     rotated 5 min ago; the old key works until 2026-09-22 11:55:00Z (in 23 h 55 min)');
    const done = sinkDetails({ ...sink, key_rotation: { rotated_at: '2026-09-19T12:00:00Z', old_key_stops_at: null } }, now);
    expect(done[4]).toBe('  send key     rotated 2 d ago; the old key no longer works');
    expect(sinkDetails(sink, now).some((line) => line.includes('send key'))).toBe(false);
  });

  it('puts an upkeep that found nothing to do, or failed, in words', () => {
    const run = sink.upkeep.last_run!;
    const quiet = { ...run, outcome: 'nothing' as const, files_before: 1, files_after: 1, manifests_before: 1, manifests_after: 1, expired_snapshots: 0, rewritten_bytes: 0, snapshots_kept: 3, seconds: 0.3 };
    expect(describeLastUpkeep(quiet, now)).toBe('1 h ago: nothing to do (1 data file, 1 manifest, 3 snapshots kept), took 0.3 s');
    const failed = { ...quiet, outcome: 'failed' as const, at: '2026-09-21T11:59:30Z', error: { code: 'commit_conflict', message: 'the table changed 5 times' } };
    expect(describeLastUpkeep(failed, now)).toBe('30 s ago: failed (commit_conflict: the table changed 5 times), took 0.3 s');
  });

  it('says why a stalled sink does not roll, in its details and its list row', () => {
    const stalled: Sink = {
      ...sink,
      roll_error: { code: 'table_unsupported', message: 'table property x must be an integer', since: '2026-09-21T11:56:00Z', last_at: '2026-09-21T11:59:40Z', attempts: 7 },
    };
    const details = sinkDetails(stalled, now);
    expect(details).toContain('  state        active, stalled');
    expect(details).toContain('  roll error   failing since 4 min ago (7 rolls, last 20 s ago): table_unsupported: table property x must be an integer');
    expect(sinkTable([stalled], now)[1]).toContain('active, stalled');
    expect(sinkDetails(sink, now).some((line) => line.includes('roll error'))).toBe(false);
  });

  it('shows the partition given at create, and no line without one', () => {
    expect(sinkDetails({ ...sink, partition: ['day(__ingest_ts)', 'bucket[16](device)'] }, now)).toContain('  partition    day(__ingest_ts), bucket[16](device) (from the first roll)');
    expect(sinkDetails(sink, now).some((line) => line.includes('partition'))).toBe(false);
  });

  it('lists sinks as a table', () => {
    expect(sinkTable([sink, { ...sink, name: 'b', last_roll: null }], now)).toEqual([
      'NAME       ID                WAREHOUSE  TABLE          STATE   WAITING                           LAST ROLL',
      'events_in  snk_0123456789ab  garden     garden.events  active  2 batches (1.2 MiB), 42 s behind  3 min ago',
      'b          snk_0123456789ab  garden     garden.events  active  2 batches (1.2 MiB), 42 s behind  -',
    ]);
  });
});
