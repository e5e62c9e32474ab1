import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import type { StorageMeasurement } from '@tablemere/contracts';
import { INTAKE_ROOT } from '@tablemere/store';
import { queryOne, type Queryable } from '@tablemere/db';
import type { FastifyBaseLogger } from 'fastify';
import { apiError, toApiError } from '../errors.ts';
import type { SecretBox } from './secrets.ts';
import { openWarehouses, type WarehouseAccess } from './warehouses.ts';

export interface BucketLocation {
  bucket: string;
  /** '' for the whole bucket, otherwise a key prefix ending in '/'. */
  prefix: string;
}

/** Where a warehouse keeps its files, when its location is an `s3://bucket[/path]` URI. */
export function bucketLocation(warehouse: string): BucketLocation | undefined {
  const match = /^s3a?:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(warehouse);
  if (!match) return undefined;
  const path = (match[2] ?? '').replace(/^\/+|\/+$/g, '');
  return { bucket: match[1]!, prefix: path === '' ? '' : `${path}/` };
}

export interface ObjectTotals {
  bytes: number;
  objects: number;
}

/** Keys the meter leaves out: the intake at the bucket's root. */
const isIntake = (key: string) => key.startsWith(INTAKE_ROOT);

async function* listPages(s3: S3Client, bucket: string, prefix: string, delimiter: string | undefined, signal?: AbortSignal) {
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({
        Bucket: bucket,
        Prefix: prefix,
        ...(delimiter ? { Delimiter: delimiter } : {}),
        ...(token ? { ContinuationToken: token } : {}),
      }),
      signal ? { abortSignal: signal } : {},
    );
    yield page;
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
}

/**
 * Sums the objects under `location`, leaving out `_sink/`. The first level is listed with a
 * delimiter and each folder but the intake's is listed on its own, so intake objects (which
 * can be many) are never even listed.
 */
export async function sumObjects(s3: S3Client, location: BucketLocation, signal?: AbortSignal): Promise<ObjectTotals> {
  const totals: ObjectTotals = { bytes: 0, objects: 0 };
  const add = (contents: Array<{ Key?: string; Size?: number }> | undefined) => {
    for (const object of contents ?? []) {
      if (object.Key === undefined || isIntake(object.Key)) continue;
      totals.bytes += object.Size ?? 0;
      totals.objects += 1;
    }
  };
  const folders: string[] = [];
  for await (const page of listPages(s3, location.bucket, location.prefix, '/', signal)) {
    add(page.Contents);
    for (const common of page.CommonPrefixes ?? []) {
      if (common.Prefix !== undefined && !isIntake(common.Prefix)) folders.push(common.Prefix);
    }
  }
  for (const folder of folders) {
    for await (const page of listPages(s3, location.bucket, folder, undefined, signal)) add(page.Contents);
  }
  return totals;
}

export type MeasureTrigger = StorageMeasurement['trigger'];

/** A client for the warehouse's own bucket, as the tenant (its registered S3 credentials). */
function tenantS3(warehouse: WarehouseAccess): S3Client {
  const { endpoint, region, accessKeyId, secretAccessKey } = warehouse.s3;
  return new S3Client({
    endpoint,
    region,
    forcePathStyle: true,
    credentials: { accessKeyId: accessKeyId!, secretAccessKey: secretAccessKey! },
    maxAttempts: 3,
  });
}

/**
 * Measures a warehouse's bucket with its own credentials and records the figure. 409
 * warehouse_not_measurable when its location is not an s3:// URI or it has no S3 keys (the
 * platform never lists a tenant's bucket with its own identity); 502 measure_failed when
 * the listing fails.
 */
export async function measureWarehouse(
  db: Queryable,
  warehouse: WarehouseAccess,
  trigger: MeasureTrigger,
  signal?: AbortSignal,
): Promise<StorageMeasurement> {
  const location = bucketLocation(warehouse.warehouse);
  if (!location) {
    throw apiError('warehouse_not_measurable', {
      message: `Warehouse "${warehouse.name}" is not at an s3://bucket location (${warehouse.warehouse}); its storage cannot be listed.`,
      details: { warehouse: warehouse.name, reason: 'not_s3_location' },
    });
  }
  if (!warehouse.s3.accessKeyId || !warehouse.s3.secretAccessKey) {
    throw apiError('warehouse_not_measurable', {
      message: `Warehouse "${warehouse.name}" has no S3 credentials registered; its storage cannot be listed.`,
      details: { warehouse: warehouse.name, reason: 'no_s3_credentials' },
    });
  }
  const s3 = tenantS3(warehouse);
  const started = performance.now();
  let totals: ObjectTotals;
  try {
    totals = await sumObjects(s3, location, signal);
  } catch (error) {
    const meta = error as { $metadata?: { httpStatusCode?: number }; name?: string } | undefined;
    throw apiError('measure_failed', {
      message: `Listing s3://${location.bucket}/${location.prefix} with warehouse "${warehouse.name}"'s credentials failed; check its S3 endpoint and keys.`,
      details: { warehouse: warehouse.name, bucket: location.bucket, store_status: meta?.$metadata?.httpStatusCode ?? null, store_error: meta?.name ?? null },
      cause: error,
    });
  } finally {
    s3.destroy();
  }
  const durationMs = Math.round(performance.now() - started);
  const row = await queryOne<{ measured_at: Date }>(
    db,
    `INSERT INTO storage_measurements (project_id, warehouse_id, bucket, prefix, bytes, objects, trigger, duration_ms)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING measured_at`,
    [warehouse.projectId, warehouse.id, location.bucket, location.prefix, totals.bytes, totals.objects, trigger, durationMs],
  );
  return {
    warehouse: warehouse.name,
    warehouse_id: warehouse.id,
    bucket: location.bucket,
    prefix: location.prefix,
    bytes: totals.bytes,
    objects: totals.objects,
    skipped_prefixes: [INTAKE_ROOT],
    trigger,
    duration_ms: durationMs,
    measured_at: row!.measured_at.toISOString(),
  };
}

export interface SweepResult {
  measured: number;
  /** Warehouses that could not be measured, each with its error code. */
  failed: Array<{ warehouse_id: string; code: string }>;
}

/** Measures every warehouse once; one failure is logged and does not stop the others. */
export async function sweepStorage(db: Queryable, box: SecretBox, log: FastifyBaseLogger, signal?: AbortSignal): Promise<SweepResult> {
  const result: SweepResult = { measured: 0, failed: [] };
  for (const warehouse of await openWarehouses(db, box)) {
    if (signal?.aborted) break;
    try {
      await measureWarehouse(db, warehouse, 'sweep', signal);
      result.measured += 1;
    } catch (error) {
      const { code } = toApiError(error);
      // A warehouse that cannot be measured by design is not a fault worth a warning each hour.
      const level = code === 'warehouse_not_measurable' ? 'info' : 'warn';
      log[level]({ warehouse_id: warehouse.id, code, err: error }, 'storage measurement failed');
      result.failed.push({ warehouse_id: warehouse.id, code });
    }
  }
  return result;
}
