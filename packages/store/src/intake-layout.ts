/**
 * Where the intake keeps a sink's batches in the platform's intake bucket, and the metadata
 * each batch object carries. The API writes these objects; the roller reads and deletes them.
 *
 *   _sink/<sink_id>/<segment_id>.seg            pending batches written together (segment.ts)
 *   _sink/<sink_id>/<batch_id>.ndjson           a pending batch of the one-object-per-batch layout of
 *                                                before segments: one element per line, as sent
 *   _sink/<sink_id>/rejects/<id>.ndjson         rows a roll refused, with their reasons, one file per
 *                                                roll named by its first segment (or batch) id
 *   _sink/<sink_id>/rolls/<snapshot_id>.json     the batch ids and counts of a roll of more
 *                                                than 1,000 batches, named by its snapshot's summary
 *
 * Rejects and roll files live a level deeper than batches, so a listing of one level (with a
 * delimiter) sees batches only.
 */
export const INTAKE_ROOT = '_sink/';
export const BATCH_SUFFIX = '.ndjson';
export const BATCH_CONTENT_TYPE = 'application/x-ndjson';

/** Metadata names on a batch object of the one-object-per-batch layout (`x-amz-meta-<name>`). */
export const BATCH_METADATA = {
  /** When the intake received the batch: RFC 3339, UTC, microseconds. `__ingest_ts` comes from it. */
  received: 'received',
  /** Lines in the object: one per element of the array sent, objects or not. */
  rows: 'rows',
  /** The sink id. */
  sink: 'sink',
} as const;

/**
 * A received stamp as the intake writes it and a timestamptz column takes it: RFC 3339, at most
 * microseconds. A batch whose stamp is not one gets the store's write time instead.
 */
export const RECEIVED_STAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$/;

/** Every object of one sink, batches and rejects. */
export const sinkPrefix = (sinkId: string) => `${INTAKE_ROOT}${sinkId}/`;
export const batchKey = (sinkId: string, batchId: string) => `${sinkPrefix(sinkId)}${batchId}${BATCH_SUFFIX}`;
export const rejectsPrefix = (sinkId: string) => `${sinkPrefix(sinkId)}rejects/`;
/** A roll's rejects file, named by the id of the first segment (or batch) the roll took. */
export const rejectsKey = (sinkId: string, firstId: string) => `${rejectsPrefix(sinkId)}${firstId}${BATCH_SUFFIX}`;
export const rollsPrefix = (sinkId: string) => `${sinkPrefix(sinkId)}rolls/`;
export const rollFileKey = (sinkId: string, snapshotId: bigint | string) => `${rollsPrefix(sinkId)}${snapshotId}.json`;

/**
 * The batch id of a pending batch's key under `sinkPrefix(sinkId)`, or undefined for any
 * other key (rejects, strays). Batch ids never contain `/`, so one level is enough.
 */
export function batchIdOfKey(sinkId: string, key: string): string | undefined {
  const prefix = sinkPrefix(sinkId);
  if (!key.startsWith(prefix) || !key.endsWith(BATCH_SUFFIX)) return undefined;
  const id = key.slice(prefix.length, -BATCH_SUFFIX.length);
  return id.length > 0 && !id.includes('/') ? id : undefined;
}

