import { z } from 'zod';
import { SEND_KEY_FORMAT, SEND_KEY_PATTERN } from './keys.ts';
import { StorableText, Timestamp, WarehouseName } from './names.ts';
import { SinkCreatedTable, SinkTableRequest } from './sink-table.ts';
import { BatchIds, KEEP_SNAPSHOTS_DEFAULT, KeepSnapshots, LINGER_MS_DEFAULT, LingerMs, MIN_SNAPSHOT_AGE_SECONDS_DEFAULT, MinSnapshotAgeSeconds, UnknownFields } from './sink-settings.ts';
import { QualifiedTableName } from './tables.ts';

/** A sink id: `snk_` and 12 lowercase hex digits; the hex is also in the sink's send key. */
export const SINK_ID_PATTERN = /^snk_([0-9a-f]{12})$/;
export const SinkId = z.string().regex(SINK_ID_PATTERN, 'a sink id is snk_ and 12 lowercase hex digits');

/**
 * Sink names: like warehouse names, and never shaped like a sink id, so a path segment that
 * looks like an id is always one.
 */
export const SINK_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;
export const SinkName = z
  .string()
  .regex(SINK_NAME_PATTERN, 'use 1-63 lowercase letters, digits, "_" or "-", starting with a letter or digit')
  .refine((name) => !SINK_ID_PATTERN.test(name), 'a sink name must not look like a sink id (snk_ and 12 hex digits)');

/** `{id|name}` path segments: an id when it looks like one, otherwise a name. */
export const SinkRef = z.union([SinkId, SinkName]);

/** The send key: `tm_send_<the sink id's 12 hex>_<43 base64url chars>` (32 random bytes); the deprecated `al_send_` too. */
export const SendKey = z.string().regex(SEND_KEY_PATTERN, `a send key is ${SEND_KEY_FORMAT}`);

/** The sink id a well-formed send key belongs to, or undefined for anything else. */
export function sinkIdOfSendKey(key: string): string | undefined {
  const match = SEND_KEY_PATTERN.exec(key);
  return match ? `snk_${match[1]}` : undefined;
}

/** The producer's `Idempotency-Key`, which is the batch id. */
export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
export const BatchId = z.string().regex(IDEMPOTENCY_KEY_PATTERN, 'a batch id is 1-128 characters of A-Z a-z 0-9 . _ : -');
/** A batch named by its content (a `batch_ids: content` sink's send without a key): this, then the body digest's 32 hex. */
export const CONTENT_BATCH_ID_PREFIX = 'content-';

/** Largest body the send route takes: 16 MiB. */
export const SEND_BODY_LIMIT = 16 * 1024 * 1024;
/** The same limit as people read it, for messages and docs. */
export const SEND_BODY_LIMIT_TEXT = `${SEND_BODY_LIMIT / 1024 / 1024} MiB`;

/** How deep a send body's elements may nest objects and arrays: every reader of the stored NDJSON must be able to parse a line. */
export const SEND_NESTING_LIMIT = 512;

/**
 * How long a settled batch's ledger row is kept, in days: while it is, its Idempotency-Key
 * answers as a replay; after it, the same id is a new batch.
 */
export const REPLAY_WINDOW_DAYS = 7;

/** Roll policy bounds and defaults. */
export const ROLL_SECONDS_DEFAULT = 300;
export const ROLL_SECONDS_MIN = 60;
export const ROLL_SECONDS_MAX = 86_400;
export const ROLL_BYTES_MIN = 32 * 1024 * 1024;
export const ROLL_BYTES_MAX = 64 * 1024 * 1024;
export const ROLL_BYTES_DEFAULT = ROLL_BYTES_MAX;
/** The roller ticks every 10 s: a shorter quiet period could not be told apart. */
export const INACTIVITY_SECONDS_MIN = 10;
/** Pending batches that make a sink due, whatever else its policy says; fixed. */
export const ROLL_MAX_BATCHES = 1000;

const Count = z.number().int().nonnegative();

/** Partition fields per sink: as many as a spec sensibly has. */
export const PARTITION_FIELDS_MAX = 4;
/**
 * One partition field, `transform(source)`: identity, bucket[N], truncate[W], year, month,
 * day or hour of a column (nested as a.b) or of `__ingest_ts`. The API checks it on the table.
 */
export const PartitionFieldText = z
  .string()
  .max(200)
  .regex(/^\s*(identity|year|month|day|hour|bucket\[\s*[1-9][0-9]{0,5}\s*\]|truncate\[\s*[1-9][0-9]{0,5}\s*\])\s*\(\s*[^()\s]+\s*\)\s*$/, 'a partition field is transform(column): identity, bucket[N], truncate[W], year, month, day or hour, e.g. day(__ingest_ts)');

/** POST /v1/sinks */
export const CreateSinkRequest = z.strictObject({
  name: SinkName,
  table: QualifiedTableName,
  warehouse: WarehouseName,
  roll_seconds: z.number().int().min(ROLL_SECONDS_MIN).max(ROLL_SECONDS_MAX).default(ROLL_SECONDS_DEFAULT),
  roll_bytes: z.number().int().min(ROLL_BYTES_MIN).max(ROLL_BYTES_MAX).default(ROLL_BYTES_DEFAULT),
  inactivity_seconds: z.number().int().min(INACTIVITY_SECONDS_MIN).max(ROLL_SECONDS_MAX).optional(),
  unknown_fields: UnknownFields.default('reject'),
  linger_ms: LingerMs.default(LINGER_MS_DEFAULT),
  batch_ids: BatchIds.default('key'),
  /** Create the table in the same request (it must not exist yet). */
  create_table: SinkTableRequest.optional(),
  keep_snapshots: KeepSnapshots.default(KEEP_SNAPSHOTS_DEFAULT),
  min_snapshot_age_seconds: MinSnapshotAgeSeconds.default(MIN_SNAPSHOT_AGE_SECONDS_DEFAULT),
  /** The table's partition from the first roll on, e.g. ["day(__ingest_ts)", "bucket[16](device)"]. */
  partition: z.array(PartitionFieldText).min(1).max(PARTITION_FIELDS_MAX).optional(),
});
export type CreateSinkRequest = z.infer<typeof CreateSinkRequest>;
export type CreateSinkInput = z.input<typeof CreateSinkRequest>;

export const SINK_STATES = ['active', 'table_missing', 'deleted'] as const;
export const SinkState = z.enum(SINK_STATES);
export type SinkState = z.infer<typeof SinkState>;

export const SinkRoll = z.object({
  roll_seconds: z.number().int(),
  roll_bytes: z.number().int(),
  inactivity_seconds: z.number().int().nullable(),
  max_batches: z.literal(ROLL_MAX_BATCHES),
});

/** What waits in intake: the ledger's pending batches. */
export const SinkLag = z.object({
  batches_waiting: Count,
  bytes_waiting: Count,
  /** received_at of the oldest pending batch; null when nothing waits. */
  oldest_waiting_at: Timestamp.nullable(),
  /** Whole seconds since oldest_waiting_at; 0 when nothing waits. */
  seconds_behind: Count,
});

/** Everything the intake accepted (202) since the sink was created, replays not counted again. */
export const SinkReceived = z.object({
  batches: Count,
  /** Elements stored for the roller, every one (the roll rejects those that are not objects). */
  rows: Count,
  /** Bytes stored (the NDJSON objects). */
  bytes: Count,
  /** received_at of the newest accepted batch; null before the first. */
  last_at: Timestamp.nullable(),
});

export const SinkLastRoll = z.object({
  at: Timestamp,
  batches: Count,
  rows: Count,
  rejected_rows: Count,
  /** 64-bit: a decimal string, never a JSON number. */
  snapshot_id: z.string().nullable(),
  seconds: z.number().nonnegative(),
});

/** How a table upkeep (manifest merge, compaction, snapshot expiry) ended. */
export const UPKEEP_OUTCOMES = ['done', 'nothing', 'failed'] as const;
export const UpkeepOutcome = z.enum(UPKEEP_OUTCOMES);
export type UpkeepOutcome = z.infer<typeof UpkeepOutcome>;

/** Why a roll or an upkeep failed: the roller's reason code and its message. */
export const JobError = z.strictObject({
  code: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'an error code is 1-64 of a-z 0-9 _, starting with a letter'),
  message: StorableText.min(1).max(4000),
});
export type JobError = z.infer<typeof JobError>;

/** The newest upkeep of the sink's table, as the roller reported it. */
export const SinkUpkeepRun = z.object({
  /** When the report was recorded (the API's clock). */
  at: Timestamp,
  outcome: UpkeepOutcome,
  seconds: z.number().nonnegative(),
  /** Data files and manifests of the table's current snapshot before and after. */
  files_before: Count,
  files_after: Count,
  manifests_before: Count,
  manifests_after: Count,
  expired_snapshots: Count,
  /** Bytes of the data files the compaction replaced. */
  rewritten_bytes: Count,
  snapshots_kept: Count,
  /** Orphan files (under the table's location, referenced by no metadata, past the safety age) deleted. */
  orphan_files_deleted: Count,
  error: JobError.nullable(),
});
export type SinkUpkeepRun = z.infer<typeof SinkUpkeepRun>;

export const SinkUpkeep = z.object({
  /** Snapshots of `main` the sink's upkeep keeps (a larger `history.expire.min-snapshots-to-keep` on the table wins). */
  keep_snapshots: z.number().int(),
  /** Snapshots younger than this are never expired, whatever the count. */
  min_snapshot_age_seconds: z.number().int(),
  last_run: SinkUpkeepRun.nullable(),
});

/** The send key's rotation: when it last rotated, and while the old key still works, when it stops. */
export const SinkKeyRotation = z.object({
  /** The newest rotation; null for a key never rotated. */
  rotated_at: Timestamp.nullable(),
  /** When the key before the newest rotation stops working (401); null once it has stopped. */
  old_key_stops_at: Timestamp.nullable(),
});

/** While the sink's rolls fail (it is stalled): the newest failure and since when they fail. */
export const SinkRollError = JobError.extend({
  /** The first failed roll of this run of failures. */
  since: Timestamp,
  /** The newest failed roll. */
  last_at: Timestamp,
  /** Failed rolls since `since`. */
  attempts: z.number().int().positive(),
});
export type SinkRollError = z.infer<typeof SinkRollError>;

export const SinkRejects = z.object({
  rows_total: Count,
  batches_with_rejects: Count,
  last_at: Timestamp.nullable(),
  /** `s3://<the sink's intake bucket>/_sink/<id>/rejects/`: one NDJSON file per batch with rejected rows. */
  prefix: z.string(),
});

export const Sink = z.object({
  id: SinkId,
  name: z.string(),
  warehouse: z.string(),
  /** `<namespace>.<table>` */
  table: z.string(),
  table_uuid: z.string(),
  /** The partition given at create, applied by the first roll (canonical `transform(source)` texts); empty for none. */
  partition: z.array(z.string()),
  state: SinkState,
  /** POST a batch here with the send key. */
  ingest_url: z.string(),
  roll: SinkRoll,
  unknown_fields: UnknownFields,
  /** How long a send may wait for others to share its intake object (0: none). */
  linger_ms: z.number().int(),
  /** How a send without an Idempotency-Key is named: refused (`key`) or by its body (`content`). */
  batch_ids: BatchIds,
  lag: SinkLag,
  received: SinkReceived,
  last_roll: SinkLastRoll.nullable(),
  /** Set while rolls fail, null once one succeeds: a stalled sink says why. */
  roll_error: SinkRollError.nullable(),
  rejects: SinkRejects,
  upkeep: SinkUpkeep,
  key_rotation: SinkKeyRotation,
  created_at: Timestamp,
  deleted_at: Timestamp.nullable(),
});
export type Sink = z.infer<typeof Sink>;

/** The answer to create: the only time the send key is shown. */
export const CreatedSink = Sink.extend({
  send_key: SendKey,
  /** Identity (IAM) changes creating the sink made in the store: none. */
  iam_writes: z.array(z.string()).length(0),
  /** The table this request created (`create_table`); absent otherwise. */
  created_table: SinkCreatedTable.optional(),
});
export type CreatedSink = z.infer<typeof CreatedSink>;

const Flag = z.enum(['true', 'false']).transform((value) => value === 'true');

/** How long the old send key keeps working after a rotation, by default: a day. */
export const KEY_OVERLAP_SECONDS_DEFAULT = 86_400;
/** The longest overlap: 7 days. */
export const KEY_OVERLAP_SECONDS_MAX = 7 * 86_400;

const OverlapSeconds = z.number().int().min(0).max(KEY_OVERLAP_SECONDS_MAX, `at most ${KEY_OVERLAP_SECONDS_MAX} (${KEY_OVERLAP_SECONDS_MAX / 86_400} days)`);

/** POST /v1/sinks/{id|name}/send-key/rotate: its JSON body, every field optional (none: the defaults). */
export const RotateSendKeyRequest = z.strictObject({
  /** Seconds the old key keeps working beside the new one; 0 stops it at once. */
  overlap_seconds: OverlapSeconds.optional(),
  /** Stop the key of an unfinished earlier rotation now, so this one can go ahead. */
  finish: z.boolean().optional(),
});
export type RotateSendKeyRequest = z.infer<typeof RotateSendKeyRequest>;

/** The same options as a query (`?overlap_seconds=N&finish=true`), kept for callers written before the body. */
export const RotateSendKeyQuery = z.strictObject({
  overlap_seconds: z.string().regex(/^[0-9]{1,7}$/, 'whole seconds').transform(Number).pipe(OverlapSeconds).optional(),
  finish: Flag.optional(),
});
export type RotateSendKeyQuery = z.infer<typeof RotateSendKeyQuery>;

/** A rotation's options, body and query together, defaults applied. */
export type RotateSendKeyOptions = Required<RotateSendKeyRequest>;

/** The answer to a rotation: the sink with its new send key, shown this once. */
export const RotatedSendKey = Sink.extend({ send_key: SendKey });
export type RotatedSendKey = z.infer<typeof RotatedSendKey>;

/** GET /v1/sinks[?warehouse=NAME][&include_deleted=true][&stalled=true] */
export const SinkListQuery = z.strictObject({
  warehouse: WarehouseName.optional(),
  include_deleted: Flag.default(false),
  /** Only sinks whose rolls are failing (roll_error set). */
  stalled: Flag.default(false),
});
export type SinkListQuery = z.infer<typeof SinkListQuery>;

export const SinkList = z.object({ sinks: z.array(Sink) });
export type SinkList = z.infer<typeof SinkList>;

export const SinkParams = z.strictObject({ sink: SinkRef });

/** DELETE /v1/sinks/{id|name} (202) */
export const DeletedSink = z.object({
  id: SinkId,
  name: z.string(),
  state: z.literal('deleted'),
  deleted_at: Timestamp,
  /** Batches that had been accepted (202) but not yet rolled: they will never reach the table. */
  pending_batches_discarded: Count,
  /** Objects removed from intake (pending batches, and any batch object without a ledger row). */
  intake_objects_removed: Count,
  /** False when the store could not remove every object; the rest stay under the sink's prefix. */
  intake_cleared: z.boolean(),
});
export type DeletedSink = z.infer<typeof DeletedSink>;

/** An element that is not an object, by its position in the array: stored, and rejected by the roll. */
export const SendReason = z.object({
  index: Count,
  /** An NDJSON body's line (1-based) of that element. */
  line: Count.optional(),
  reason: z.literal('not_an_object'),
});

/** The send route's answer: 202 the first time, 200 with the same body for a replay. */
export const SendResult = z.object({
  /** Objects stored for the roller. */
  accepted: Count,
  /**
   * Elements that are not objects: stored all the same (a row is rejected, never a batch), and
   * the roll writes them to the rejects file with reason not_an_object.
   */
  rejected: Count,
  /** The first SEND_REASONS_LIMIT of those elements; `rejected` counts them all. */
  reasons: z.array(SendReason),
  batch_id: BatchId,
  /** How this request named the batch: its `Idempotency-Key`, or its body's content (a `batch_ids: content` sink's send without a key). */
  batch_id_from: z.enum(['key', 'content']),
  /** Size of the stored NDJSON object: every element's bytes, one per line. */
  bytes: Count,
  received_at: Timestamp,
  state: z.literal('pending'),
});
export type SendResult = z.infer<typeof SendResult>;

/** The send route's path: a sink id only (a name is refused, as the key names the sink's id). */
export const SendParams = z.strictObject({ sink: SinkId });

/**
 * The send route's body as producers write it: a JSON array of at least one row object. The
 * route reads the bytes itself and stores them as sent; an element that is not an object is
 * stored too, counted in `rejected`, and the roll rejects it as not_an_object.
 */
export const SendBatch = z.array(z.record(z.string(), z.unknown())).min(1);

/** How many elements that are not objects `reasons` lists at most. */
export const SEND_REASONS_LIMIT = 1000;

export const BatchParams = z.strictObject({ sink: SinkRef, batch_id: BatchId });

export const BATCH_STATES = ['pending', 'committed', 'rejected', 'discarded', 'unknown'] as const;

/**
 * GET /v1/sinks/{id}/batches/{batch_id}: pending (stored, waiting for a roll), committed
 * (in the table: snapshot_id), rejected (rolled, every row refused: see the rejects
 * prefix), discarded (the sink was deleted first), unknown (never accepted, or pruned 7
 * days after its roll).
 */
export const BatchStatus = z.object({
  sink_id: SinkId,
  batch_id: BatchId,
  state: z.enum(BATCH_STATES),
  received_at: Timestamp.nullable(),
  bytes: Count.nullable(),
  /** Elements stored, objects or not. */
  rows: Count.nullable(),
  /** Rows the roll refused; null until the batch is rolled. */
  rejected_rows: Count.nullable(),
  snapshot_id: z.string().nullable(),
  committed_at: Timestamp.nullable(),
});
export type BatchStatus = z.infer<typeof BatchStatus>;
