import type { Sink } from '@tablemere/contracts';
import { ago, count, plural, size, span, when } from './human.ts';
import { columns } from './output.ts';

/** The roll policy in words: `every 5 min, or once 64.0 MiB wait, or at 1,000 batches`. */
export function describeRoll(roll: Sink['roll']): string {
  return [
    `every ${span(roll.roll_seconds)}`,
    `or once ${size(roll.roll_bytes)} wait`,
    ...(roll.inactivity_seconds === null ? [] : [`or after ${span(roll.inactivity_seconds)} without a batch`]),
    `or at ${plural(roll.max_batches, 'batch', 'batches')}`,
  ].join(', ');
}

/** What a roll does with a row field the table lacks. */
export function describeUnknownFields(mode: Sink['unknown_fields']): string {
  return mode === 'add_columns' ? 'added to the table as optional columns (add_columns)' : 'rows carrying them are rejected (reject)';
}

/** How the intake groups the sink's sends into objects. */
export function describeLinger(lingerMs: number): string {
  return lingerMs === 0 ? 'sends written at once, together when they arrive together' : `sends wait up to ${lingerMs} ms to share an object`;
}

/** How the sink names its batches. */
export function describeBatchIds(mode: Sink['batch_ids']): string {
  return mode === 'content' ? "by Idempotency-Key, else by the body's content (content)" : 'by Idempotency-Key, required (key)';
}

/** What waits for the roll: `2 batches (1.2 MiB), 42 s behind` or `nothing`. */
export function describeLag(lag: Sink['lag']): string {
  if (lag.batches_waiting === 0) return 'nothing';
  return `${plural(lag.batches_waiting, 'batch', 'batches')} (${size(lag.bytes_waiting)}), ${span(lag.seconds_behind)} behind`;
}

function describeLastRoll(last: Sink['last_roll'], now: Date): string {
  if (last === null) return 'none yet';
  const snapshot = last.snapshot_id === null ? 'nothing committed' : `snapshot ${last.snapshot_id}`;
  return (
    `${ago(last.at, now)}: ${plural(last.batches, 'batch', 'batches')}, ${plural(last.rows, 'row')}, ` +
    `${plural(last.rejected_rows, 'row')} rejected, ${snapshot}, took ${last.seconds.toFixed(1)} s`
  );
}

/**
 * The newest table upkeep: `1 h ago: done, data files 120 -> 4, manifests 30 -> 2, 12.0 MiB
 * rewritten, 5 snapshots expired, 20 kept, took 4.2 s`; a failed one says why instead.
 */
export function describeLastUpkeep(last: Sink['upkeep']['last_run'], now: Date): string {
  if (last === null) return 'none yet';
  const took = `took ${last.seconds.toFixed(1)} s`;
  if (last.error !== null) return `${ago(last.at, now)}: failed (${last.error.code}: ${last.error.message}), ${took}`;
  const kept = `${plural(last.snapshots_kept, 'snapshot')} kept`;
  if (last.outcome === 'nothing') {
    return `${ago(last.at, now)}: nothing to do (${plural(last.files_after, 'data file')}, ${plural(last.manifests_after, 'manifest')}, ${kept}), ${took}`;
  }
  return (
    `${ago(last.at, now)}: ${last.outcome}, data files ${count(last.files_before)} -> ${count(last.files_after)}, ` +
    `manifests ${count(last.manifests_before)} -> ${count(last.manifests_after)}, ${size(last.rewritten_bytes)} rewritten, ` +
    `${plural(last.expired_snapshots, 'snapshot')} expired, ${count(last.snapshots_kept)} kept, ` +
    `${last.orphan_files_deleted > 0 ? `${plural(last.orphan_files_deleted, 'orphan file')} deleted, ` : ''}${took}`
  );
}

/** Snapshot retention: `keep 20, none younger than 10 min`, or `keep 3, no minimum age`. */
export function describeRetention(upkeep: Sink['upkeep']): string {
  const age = upkeep.min_snapshot_age_seconds === 0 ? 'no minimum age' : `none younger than ${span(upkeep.min_snapshot_age_seconds)}`;
  return `keep ${count(upkeep.keep_snapshots)}, ${age}`;
}

/** Why rolls fail, while they do: `failing since 4 min ago (7 rolls, last 20 s ago): table_unsupported: …`. */
export function describeRollError(error: NonNullable<Sink['roll_error']>, now: Date): string {
  return `failing since ${ago(error.since, now)} (${plural(error.attempts, 'roll')}, last ${ago(error.last_at, now)}): ${error.code}: ${error.message}`;
}

/** A rotated send key: `rotated 5 min ago; the old key works until 2026-09-22 11:55:00Z (in 23 h 55 min)`. */
export function describeKeyRotation(rotatedAt: string, oldKeyStopsAt: string | null, now: Date): string {
  const old = oldKeyStopsAt === null ? 'the old key no longer works' : `the old key works until ${when(oldKeyStopsAt, now)}`;
  return `rotated ${ago(rotatedAt, now)}; ${old}`;
}

/** The sink's state, `stalled` added while its rolls fail. */
function describeState(sink: Sink): string {
  return sink.roll_error === null ? sink.state : `${sink.state}, stalled`;
}

function describeRejects(sink: Sink, now: Date): string {
  const rejects = sink.rejects;
  if (rejects.rows_total === 0) return 'none';
  const last = rejects.last_at === null ? '' : `, last ${ago(rejects.last_at, now)}`;
  return `${plural(rejects.rows_total, 'row')} in ${plural(rejects.batches_with_rejects, 'batch', 'batches')}${last}; see: tablemere sink rejects ${sink.name}`;
}

function describeReceived(received: Sink['received'], now: Date): string {
  if (received.batches === 0) return 'nothing yet';
  const last = received.last_at === null ? '' : `; last ${ago(received.last_at, now)}`;
  return `${plural(received.batches, 'batch', 'batches')}, ${plural(received.rows, 'row')}, ${size(received.bytes)}${last}`;
}

/** `sink get`: one labelled line per aspect, ages relative to `now`. */
export function sinkDetails(sink: Sink, now: Date): string[] {
  return [
    `sink ${sink.name} (${sink.id})`,
    ...columns(
      [
        ['table', `${sink.table} in warehouse ${sink.warehouse}`],
        ...(sink.partition.length === 0 ? [] : [['partition', `${sink.partition.join(', ')} (from the first roll)`]]),
        ['state', describeState(sink)],
        ...(sink.roll_error === null ? [] : [['roll error', describeRollError(sink.roll_error, now)]]),
        ['ingest URL', sink.ingest_url],
        ...(sink.key_rotation.rotated_at === null ? [] : [['send key', describeKeyRotation(sink.key_rotation.rotated_at, sink.key_rotation.old_key_stops_at, now)]]),
        ['roll', describeRoll(sink.roll)],
        ['new fields', describeUnknownFields(sink.unknown_fields)],
        ['intake', describeLinger(sink.linger_ms)],
        ['batch ids', describeBatchIds(sink.batch_ids)],
        ['waiting', describeLag(sink.lag)],
        ['received', describeReceived(sink.received, now)],
        ['last roll', describeLastRoll(sink.last_roll, now)],
        ['rejects', describeRejects(sink, now)],
        ['snapshots', describeRetention(sink.upkeep)],
        ['last upkeep', describeLastUpkeep(sink.upkeep.last_run, now)],
        ['created', when(sink.created_at, now)],
        ...(sink.deleted_at === null ? [] : [['deleted', when(sink.deleted_at, now)]]),
      ],
      '  ',
    ),
  ];
}

/** `sink list`: a header and one row per sink. */
export function sinkTable(sinks: readonly Sink[], now: Date): string[] {
  return columns([
    ['NAME', 'ID', 'WAREHOUSE', 'TABLE', 'STATE', 'WAITING', 'LAST ROLL'],
    ...sinks.map((sink) => [
      sink.name,
      sink.id,
      sink.warehouse,
      sink.table,
      describeState(sink),
      describeLag(sink.lag),
      sink.last_roll === null ? '-' : ago(sink.last_roll.at, now),
    ]),
  ]);
}
