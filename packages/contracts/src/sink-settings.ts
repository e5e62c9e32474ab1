import { z } from 'zod';

/**
 * A sink's settings an owner may change after create (PATCH /v1/sinks/{id}), with their
 * bounds. Create takes the same fields with defaults.
 */

/** Snapshots of the table's `main` that upkeep's expiry keeps, per sink. */
export const KEEP_SNAPSHOTS_MIN = 1;
export const KEEP_SNAPSHOTS_MAX = 1000;
export const KEEP_SNAPSHOTS_DEFAULT = 20;
/** Snapshots younger than this are never expired, whatever the count: a reader may be planning on one (10 minutes, as before per-sink settings). */
export const MIN_SNAPSHOT_AGE_SECONDS_DEFAULT = 600;
/** A year: longer is time travel, which keep_snapshots and the table's own properties serve. */
export const MIN_SNAPSHOT_AGE_SECONDS_MAX = 365 * 86_400;

export const KeepSnapshots = z
  .number()
  .int('keep_snapshots is a whole number')
  .min(KEEP_SNAPSHOTS_MIN, `keep_snapshots is ${KEEP_SNAPSHOTS_MIN} to ${KEEP_SNAPSHOTS_MAX}`)
  .max(KEEP_SNAPSHOTS_MAX, `keep_snapshots is ${KEEP_SNAPSHOTS_MIN} to ${KEEP_SNAPSHOTS_MAX}`);
export const MinSnapshotAgeSeconds = z
  .number()
  .int('min_snapshot_age_seconds is whole seconds')
  .min(0, `min_snapshot_age_seconds is 0 to ${MIN_SNAPSHOT_AGE_SECONDS_MAX} (a year)`)
  .max(MIN_SNAPSHOT_AGE_SECONDS_MAX, `min_snapshot_age_seconds is 0 to ${MIN_SNAPSHOT_AGE_SECONDS_MAX} (a year)`);

/**
 * How long a send may wait for other sends to the sink to share its intake object (segment):
 * 0, the default, waits for nothing new (a send is written at once, or with those that arrived
 * while the sink's previous segment was being written); more trades that much latency per send
 * for fewer objects, which is what an object store bills.
 */
export const LINGER_MS_MAX = 1000;
export const LINGER_MS_DEFAULT = 0;
export const LingerMs = z
  .number()
  .int('linger_ms is whole milliseconds')
  .min(0, `linger_ms is 0 to ${LINGER_MS_MAX}`)
  .max(LINGER_MS_MAX, `linger_ms is 0 to ${LINGER_MS_MAX}`);

/**
 * What a roll does with a row field the table's schema lacks: `reject` the row
 * (`unknown_field`, the default: a dropped field is the one failure a producer cannot see), or
 * `add_columns`: add the field as an optional column, typed from the roll's rows, then take the row.
 */
export const UNKNOWN_FIELDS_MODES = ['reject', 'add_columns'] as const;
export const UnknownFields = z.enum(UNKNOWN_FIELDS_MODES);
export type UnknownFields = z.infer<typeof UnknownFields>;

/**
 * How a send without an `Idempotency-Key` is named: `key` (the default) refuses it
 * (idempotency_key_missing); `content` names it by its body (the decoded bytes' digest), so a
 * resend of the same body is a replay and never a second batch. The trade: on a `content`
 * sink two identical bodies sent within the replay window are one batch. A send with a key is
 * named by its key either way.
 */
export const BATCH_IDS_MODES = ['key', 'content'] as const;
export const BatchIds = z.enum(BATCH_IDS_MODES);
export type BatchIds = z.infer<typeof BatchIds>;

/**
 * PATCH /v1/sinks/{id|name}: the settings to change, each optional (none at all is 400
 * `nothing_to_update`). A new changeable setting is one more optional field here and one more
 * column in the API's SETTING_COLUMNS: the body stays a flat object of fields create takes.
 */
export const UpdateSinkRequest = z.strictObject({
  keep_snapshots: KeepSnapshots.optional(),
  min_snapshot_age_seconds: MinSnapshotAgeSeconds.optional(),
  unknown_fields: UnknownFields.optional(),
  linger_ms: LingerMs.optional(),
  batch_ids: BatchIds.optional(),
});
export type UpdateSinkRequest = z.infer<typeof UpdateSinkRequest>;
