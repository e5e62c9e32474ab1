import type { S3Client } from '@aws-sdk/client-s3';
import type { Queryable } from '@tablemere/db';
import { createS3Client, ObjectStore } from '@tablemere/store';
import type { SecretBox } from '../secrets.ts';
import { openWarehouses, type WarehouseAccess } from '../warehouses.ts';

/** Where a warehouse's sinks keep `_sink/`, and whose credentials write it. */
export interface IntakePlacement {
  bucket: string;
  identity: 'platform' | 'warehouse';
}

/**
 * A warehouse with a sink_bucket (an ordinary bucket) keeps `_sink/` there, written as the
 * warehouse's identity, so the bucket's quota and permissions govern its intake; any other
 * (a table bucket takes Iceberg's keys only) uses the platform's intake bucket.
 */
export function intakePlacement(warehouse: Pick<WarehouseAccess, 's3'>, platformBucket: string): IntakePlacement {
  return warehouse.s3.sinkBucket ? { bucket: warehouse.s3.sinkBucket, identity: 'warehouse' } : { bucket: platformBucket, identity: 'platform' };
}

/** A warehouse's store is read again after this long, so a PATCH of its endpoint or keys reaches every API process. */
const INTAKE_STORE_FRESH_MS = 60_000;
/** A request to the store without an answer after this long fails, and the send answers 503 (TABLEMERE_STORE_TIMEOUT_MS). */
export const DEFAULT_STORE_TIMEOUT_MS = 10_000;

/**
 * The intake store of each warehouse's sinks, built from its registration and kept for a minute
 * (a PATCH may change its endpoint or keys). The platform's store serves every warehouse
 * without a sink_bucket.
 */
export class IntakeStores {
  private readonly kept = new Map<string, { at: number; store: Promise<ObjectStore> }>();
  /** Each warehouse's client and store, rebuilt only when its registration changed. */
  private readonly built = new Map<string, { settings: string; client: S3Client; store: ObjectStore }>();

  constructor(
    private readonly db: Queryable,
    private readonly box: SecretBox,
    private readonly platform: ObjectStore,
    /** Each request's deadline on a warehouse's own bucket. */
    private readonly requestTimeoutMs: number,
  ) {}

  of(warehouseId: string): Promise<ObjectStore> {
    const kept = this.kept.get(warehouseId);
    if (kept && Date.now() - kept.at < INTAKE_STORE_FRESH_MS) return kept.store;
    const entry = { at: Date.now(), store: this.open(warehouseId) };
    // A failed read is not kept: the next request tries again.
    entry.store.catch(() => {
      if (this.kept.get(warehouseId) === entry) this.kept.delete(warehouseId);
    });
    this.kept.set(warehouseId, entry);
    return entry.store;
  }

  private async open(warehouseId: string): Promise<ObjectStore> {
    const [warehouse] = await openWarehouses(this.db, this.box, [warehouseId]);
    if (!warehouse) throw new Error(`warehouse ${warehouseId} is not registered`);
    const placement = intakePlacement(warehouse, this.platform.bucket);
    if (placement.identity === 'platform') return this.platform;
    const { endpoint, region, accessKeyId, secretAccessKey } = warehouse.s3;
    const settings = JSON.stringify([endpoint, region, accessKeyId, secretAccessKey, placement.bucket]);
    const built = this.built.get(warehouseId);
    if (built?.settings === settings) return built.store;
    const client = createS3Client({
      endpoint,
      region,
      requestTimeoutMs: this.requestTimeoutMs,
      ...(accessKeyId && secretAccessKey ? { credentials: { accessKeyId, secretAccessKey } } : {}),
    });
    const store = new ObjectStore(client, placement.bucket);
    this.built.set(warehouseId, { settings, client, store });
    // The registration changed: requests still using the old client finish before it closes.
    if (built) setTimeout(() => built.client.destroy(), INTAKE_STORE_FRESH_MS).unref();
    return store;
  }

  /** Ends the warehouses' clients (the platform's is the caller's); for the app's close. */
  close(): void {
    this.kept.clear();
    for (const { client } of this.built.values()) client.destroy();
    this.built.clear();
  }
}
