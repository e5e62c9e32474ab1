import { z } from 'zod';
import { StorableText, Timestamp } from './names.ts';
import { UnknownFields } from './sink-settings.ts';
import { BatchId, JobError, ROLL_MAX_BATCHES, SinkId, SinkRollError, UpkeepOutcome } from './sinks.ts';
import { CatalogAuthInput } from './warehouses.ts';

/**
 * The roller's API: served only on the internal listener, guarded by
 * `Authorization: Bearer <TABLEMERE_BOOTSTRAP_SECRET>`. It hands out tenant credentials in
 * clear, which is why it is never reachable on the public port.
 */

const Count = z.number().int().nonnegative();

/** An Iceberg snapshot id as a decimal string: a positive 63-bit integer (JSON numbers lose it). */
const SNAPSHOT_ID_PATTERN = /^[1-9][0-9]{0,18}$/;
export const SnapshotId = z
  .string()
  .regex(SNAPSHOT_ID_PATTERN, 'a snapshot id is a positive decimal integer, as a string')
  // zod runs this check even when the pattern failed, and BigInt() throws on anything else.
  .refine((id) => !SNAPSHOT_ID_PATTERN.test(id) || BigInt(id) <= 9223372036854775807n, 'a snapshot id fits in 63 bits');

/** Names a roller process in leases and logs (host name, pod name, ...). */
export const RollerId = z.string().regex(/^[A-Za-z0-9._:@/-]{1,128}$/, '1-128 characters of A-Z a-z 0-9 . _ : @ / -');

export const LeaseId = z.uuid();
export const RollId = z.uuid();

export const InternalSinkParams = z.strictObject({ id: SinkId });

const Flag = z.enum(['true', 'false']).transform((value) => value === 'true');

/** GET /internal/sinks[?due=true][&sink=ID][&limit=N] */
export const InternalSinksQuery = z.strictObject({
  due: Flag.optional(),
  /** Only this sink: with `due=true`, whether it is due now. */
  sink: SinkId.optional(),
  limit: z.coerce.number().int().min(1).max(10_000).optional(),
});
export type InternalSinksQuery = z.infer<typeof InternalSinksQuery>;

/** Why a sink is due; several can hold at once. */
export const DUE_REASONS = ['roll_seconds', 'roll_bytes', 'max_batches', 'inactivity'] as const;
export const DueReason = z.enum(DUE_REASONS);
export type DueReason = z.infer<typeof DueReason>;

/** The warehouse as the roller must use it to act as the tenant: secrets in clear. */
export const InternalWarehouse = z.object({
  id: z.uuid(),
  name: z.string(),
  rest_uri: z.string(),
  warehouse: z.string(),
  auth: CatalogAuthInput,
  s3: z.object({
    endpoint: z.string(),
    region: z.string(),
    access_key_id: z.string().nullable(),
    secret_access_key: z.string().nullable(),
    path_style: z.literal(true),
  }),
});
export type InternalWarehouse = z.infer<typeof InternalWarehouse>;

export const InternalSink = z.object({
  id: SinkId,
  project_id: z.uuid(),
  name: z.string(),
  /** `active`, `table_missing`, ...; deleted sinks are never listed. */
  state: z.string(),
  namespace: z.string(),
  table: z.string(),
  table_uuid: z.string().nullable(),
  /** The partition the sink's first roll gives the table (`day(__ingest_ts)`, ...); empty for none. */
  partition: z.array(z.string()),
  policy: z.object({
    roll_seconds: z.number().int().positive(),
    roll_bytes: z.number().int().positive(),
    inactivity_seconds: z.number().int().positive().nullable(),
    max_batches: z.literal(ROLL_MAX_BATCHES),
  }),
  /** What the roll does with row fields the table lacks. */
  unknown_fields: UnknownFields,
  /** The ledger's pending batches (object durable, answered 202, not yet committed). */
  pending: z.object({
    batches: Count,
    bytes: Count,
    oldest_received_at: Timestamp.nullable(),
    newest_received_at: Timestamp.nullable(),
  }),
  due: z.boolean(),
  due_reasons: z.array(DueReason),
  last_roll_at: Timestamp.nullable(),
  /** Set while the sink's rolls fail; the roller clears it after a good roll. */
  roll_error: SinkRollError.nullable(),
  /** The newest upkeep reported: when it was recorded (the database's clock, like as_of) and how it ended. */
  upkeep: z.object({
    last_at: Timestamp.nullable(),
    last_outcome: UpkeepOutcome.nullable(),
    /** The sink's retention, which the roller's expiry uses. */
    keep_snapshots: z.number().int().positive(),
    min_snapshot_age_seconds: z.number().int().nonnegative(),
  }),
  /** The current lease, when one is unexpired. */
  lease: z.object({ roller_id: z.string(), expires_at: Timestamp }).nullable(),
  warehouse: InternalWarehouse,
  intake: z.object({
    bucket: z.string(),
    /**
     * Whose credentials reach the bucket: the platform's store (its own intake bucket), or the
     * warehouse's `s3` (a sink_bucket of the warehouse).
     */
    identity: z.enum(['platform', 'warehouse']),
    /** `_sink/<sink_id>/`: the pending segments, `<segment_id>.seg` (and batch objects of the old layout, `<batch_id>.ndjson`). */
    prefix: z.string(),
    /** `_sink/<sink_id>/rejects/`. */
    rejects_prefix: z.string(),
  }),
});
export type InternalSink = z.infer<typeof InternalSink>;

/** `enabled: false` (TABLEMERE_SINKS_ENABLED=false): the roller idles; `sinks` is then empty. */
export const InternalSinkList = z.object({
  enabled: z.boolean(),
  /** The database's clock when the list was read: due-ness was decided against it. */
  as_of: Timestamp,
  sinks: z.array(InternalSink),
});
export type InternalSinkList = z.infer<typeof InternalSinkList>;

/** POST /internal/sinks/{id}/lease: take the lease, or renew it by giving its lease_id. */
export const LeaseRequest = z.strictObject({
  roller_id: RollerId,
  ttl_seconds: z.number().int().min(5).max(3600),
  lease_id: LeaseId.optional(),
});
export type LeaseRequest = z.infer<typeof LeaseRequest>;

export const Lease = z.object({
  sink_id: SinkId,
  lease_id: LeaseId,
  roller_id: z.string(),
  acquired_at: Timestamp,
  expires_at: Timestamp,
});
export type Lease = z.infer<typeof Lease>;

/** The `holder` detail of 409 lease_held / lease_lost (null when nobody holds it). */
export const LeaseHolder = z.object({ roller_id: z.string(), expires_at: Timestamp }).nullable();

export const LeaseParams = z.strictObject({ id: SinkId, lease_id: LeaseId });

/** DELETE /internal/sinks/{id}/lease/{lease_id}: false when the lease was not (or no longer) this one. */
export const LeaseRelease = z.object({ released: z.boolean() });
export type LeaseRelease = z.infer<typeof LeaseRelease>;

/**
 * Most batches one roll takes: a sanity cap on what an intent and a report carry (ids of up to
 * 128 characters: ~7 MiB of intent, ~9 MiB of report at most) and what a roller holds per roll.
 * A roll takes the oldest batches up to roll_bytes and this many; above ROLL_MAX_BATCHES the
 * ids go to a sidecar file the snapshot summary names (apps/roller/src/roll/summary.ts).
 */
export const ROLL_MAX_BATCH_IDS = 50_000;

export const ROLL_STATES = ['open', 'committed', 'empty', 'failed'] as const;
export const RollState = z.enum(ROLL_STATES);
export type RollState = z.infer<typeof RollState>;

/**
 * POST /internal/sinks/{id}/rolls: what the roller is about to commit, recorded before the
 * commit, so recovery works even after the snapshot was expired.
 */
export const RollIntentRequest = z.strictObject({
  lease_id: LeaseId,
  snapshot_id: SnapshotId,
  batch_ids: z
    .array(BatchId)
    .min(1)
    .max(ROLL_MAX_BATCH_IDS)
    .refine((ids) => new Set(ids).size === ids.length, 'batch ids must be distinct'),
  /** The segments (intake objects of many batches) the roll takes; the batches of the one-object layout are in batch_ids alone. */
  segment_ids: z
    .array(z.string().regex(/^[0-9a-z]{9}-[0-9a-f]{12}$/, 'a segment id'))
    .max(ROLL_MAX_BATCH_IDS)
    .refine((ids) => new Set(ids).size === ids.length, 'segment ids must be distinct')
    .default([]),
});
export type RollIntentRequest = z.infer<typeof RollIntentRequest>;

export const RollIntent = z.object({
  roll_id: RollId,
  sink_id: SinkId,
  snapshot_id: SnapshotId.nullable(),
  batch_ids: z.array(z.string()),
  segment_ids: z.array(z.string()),
  state: RollState,
  roller_id: z.string(),
  created_at: Timestamp,
  closed_at: Timestamp.nullable(),
});
export type RollIntent = z.infer<typeof RollIntent>;

/** GET /internal/sinks/{id}/rolls[?state=open][&limit=N], newest first. */
export const RollsQuery = z.strictObject({
  state: RollState.optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});
export type RollsQuery = z.infer<typeof RollsQuery>;

export const RollList = z.object({ rolls: z.array(RollIntent) });
export type RollList = z.infer<typeof RollList>;

/** One consumed batch: rows appended to the table from it, rows written to its rejects file. */
export const ReportedBatch = z.strictObject({
  batch_id: BatchId,
  rows: Count,
  rejected_rows: Count,
});
export type ReportedBatch = z.infer<typeof ReportedBatch>;

export const ROLL_OUTCOMES = ['committed', 'empty', 'failed'] as const;
export const RollOutcome = z.enum(ROLL_OUTCOMES);
export type RollOutcome = z.infer<typeof RollOutcome>;

/**
 * POST /internal/sinks/{id}/roll: the roller's report. `committed`: one snapshot appended
 * the batches; `empty`: the batches were consumed but every row was rejected, nothing was
 * committed (or nothing was pending); `failed`: nothing was committed and nothing consumed
 * (with roll_id, it closes that intent as abandoned: send it only when the commit surely did
 * not happen). `rows` and `rejected_rows` are the sums over `batches`.
 */
export const RollReport = z
  .strictObject({
    lease_id: LeaseId,
    roll_id: RollId.optional(),
    snapshot_id: SnapshotId.nullable(),
    batches: z
      .array(ReportedBatch)
      .max(ROLL_MAX_BATCH_IDS)
      .refine((batches) => new Set(batches.map((b) => b.batch_id)).size === batches.length, 'batch ids must be distinct'),
    rows: Count,
    rejected_rows: Count,
    seconds: z.number().nonnegative(),
    attempts: z.number().int().nonnegative(),
    started_at: Timestamp,
    outcome: RollOutcome,
    error: StorableText.max(4000).optional(),
  })
  .superRefine((report, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (report.outcome === 'committed') {
      if (report.snapshot_id === null) issue('snapshot_id', 'a committed roll names its snapshot');
      if (report.batches.length === 0) issue('batches', 'a committed roll consumed at least one batch');
    } else if (report.snapshot_id !== null) {
      issue('snapshot_id', `an ${report.outcome} roll committed no snapshot: send null`);
    }
    if (report.outcome === 'failed' && report.batches.length > 0) issue('batches', 'a failed roll consumed no batch');
    if (report.outcome === 'empty' && report.rows > 0) issue('rows', 'an empty roll appended no rows');
    const rows = report.batches.reduce((sum, b) => sum + b.rows, 0);
    const rejected = report.batches.reduce((sum, b) => sum + b.rejected_rows, 0);
    if (rows !== report.rows) issue('rows', `rows must be the sum over batches (${rows})`);
    if (rejected !== report.rejected_rows) issue('rejected_rows', `rejected_rows must be the sum over batches (${rejected})`);
  });
export type RollReport = z.infer<typeof RollReport>;

export const RollReportResult = z.object({
  roll_id: RollId,
  sink_id: SinkId,
  outcome: RollOutcome,
  snapshot_id: SnapshotId.nullable(),
  /** What this report did to the ledger: rows it moved to committed, rows already committed, ids it has no row for. */
  ledger: z.object({ committed: Count, already_committed: Count, unknown: Count }),
  /** True when this roll was reported before: nothing changed this time. */
  replayed: z.boolean(),
});
export type RollReportResult = z.infer<typeof RollReportResult>;

export const SETTABLE_SINK_STATES = ['active', 'table_missing'] as const;

/** PUT /internal/sinks/{id}/state: e.g. table_missing when the table was dropped, back to active. */
export const SinkStateRequest = z.strictObject({
  lease_id: LeaseId,
  state: z.enum(SETTABLE_SINK_STATES),
  reason: StorableText.max(1000).optional(),
});
export type SinkStateRequest = z.infer<typeof SinkStateRequest>;

/**
 * PUT /internal/sinks/{id}/roll-error: the roller's word after a roll, under the sink's lease:
 * why it failed (counted into the sink's run of failures), or null when it went through.
 */
export const RollErrorRequest = z.strictObject({
  lease_id: LeaseId,
  error: JobError.nullable(),
});
export type RollErrorRequest = z.infer<typeof RollErrorRequest>;

export const RollErrorResult = z.object({
  sink_id: SinkId,
  roll_error: SinkRollError.nullable(),
});
export type RollErrorResult = z.infer<typeof RollErrorResult>;

export const SinkStateResult = z.object({
  sink_id: SinkId,
  state: z.string(),
  previous_state: z.string(),
});
export type SinkStateResult = z.infer<typeof SinkStateResult>;

/** Snapshots one upkeep can add: a manifest rewrite and a compaction, with room to spare. */
export const UPKEEP_MAX_SNAPSHOTS = 10;

/**
 * POST /internal/sinks/{id}/upkeep: the roller's report of one upkeep of the sink's table,
 * run under the sink's lease. `snapshot_ids` are the snapshots it added (the manifest rewrite,
 * the compaction's `replace`; expiry adds none). `files` counts the current snapshot's data
 * files and manifests before and after; `rewritten` is what the committed compaction replaced;
 * `deleted_files` what expiry removed from the store, `orphan_files` what orphan removal did.
 * `done` changed the table (or deleted orphan files), `nothing` found
 * nothing to do and changed nothing, `failed` says why in `error` (and may still have
 * committed before it failed).
 */
export const UpkeepReport = z
  .strictObject({
    lease_id: LeaseId,
    started_at: Timestamp,
    seconds: z.number().nonnegative(),
    outcome: UpkeepOutcome,
    snapshot_ids: z
      .array(SnapshotId)
      .max(UPKEEP_MAX_SNAPSHOTS)
      .refine((ids) => new Set(ids).size === ids.length, 'snapshot ids must be distinct'),
    files: z.strictObject({ data_before: Count, data_after: Count, manifests_before: Count, manifests_after: Count }),
    rewritten: z.strictObject({ files: Count, bytes: Count, rows: Count }),
    expired_snapshots: Count,
    deleted_files: z.strictObject({ data: Count, manifests: Count, manifest_lists: Count }),
    snapshots_kept: Count,
    /** Files under the table's location that no metadata referenced, older than the safety age, deleted. */
    orphan_files: z.strictObject({ deleted: Count, bytes: Count }).default({ deleted: 0, bytes: 0 }),
    error: JobError.optional(),
  })
  .superRefine((report, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    const committed = report.snapshot_ids.length > 0;
    if ((report.outcome === 'failed') !== (report.error !== undefined)) {
      issue('error', report.outcome === 'failed' ? 'a failed upkeep says why' : `a ${report.outcome} upkeep has no error`);
    }
    if (report.outcome === 'done' && !committed && report.expired_snapshots === 0 && report.orphan_files.deleted === 0) {
      issue('outcome', 'a done upkeep added a snapshot, expired one or deleted an orphan file; else it is nothing');
    }
    if (report.outcome === 'nothing') {
      if (committed) issue('snapshot_ids', 'a nothing upkeep added no snapshot');
      if (report.expired_snapshots > 0) issue('expired_snapshots', 'a nothing upkeep expired no snapshot');
      if (Object.values(report.deleted_files).some((n) => n > 0)) issue('deleted_files', 'a nothing upkeep deleted no file');
      if (report.orphan_files.deleted > 0) issue('orphan_files', 'a nothing upkeep deleted no orphan file');
    }
    const { files, bytes, rows } = report.rewritten;
    if (files === 0 && (bytes > 0 || rows > 0)) issue('rewritten', 'bytes and rows rewritten come from rewritten files');
    if (files > 0 && !committed) issue('rewritten', 'rewritten files are replaced by a committed snapshot: name it in snapshot_ids');
  });
export type UpkeepReport = z.infer<typeof UpkeepReport>;

export const UpkeepReportResult = z.object({
  upkeep_id: z.uuid(),
  sink_id: SinkId,
  outcome: UpkeepOutcome,
  started_at: Timestamp,
  /** When the API recorded the first report of this upkeep: the sink's upkeep.last_at, if newest. */
  recorded_at: Timestamp,
  /** True when this upkeep was reported before: nothing changed this time. */
  replayed: z.boolean(),
});
export type UpkeepReportResult = z.infer<typeof UpkeepReportResult>;
