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

/**
 * The intake store of each warehouse's sinks, built once per warehouse and kept: a warehouse
 * registration never changes. The platform's store serves every warehouse without a
 * sink_bucket.
 */
export class IntakeStores {
  private readonly kept = new Map<string, Promise<ObjectStore>>();
  private readonly clients: S3Client[] = [];

  constructor(
    private readonly db: Queryable,
    private readonly box: SecretBox,
    private readonly platform: ObjectStore,
  ) {}

  of(warehouseId: string): Promise<ObjectStore> {
    let store = this.kept.get(warehouseId);
    if (!store) {
      store = this.open(warehouseId);
      // A failed read is not kept: the next request tries again.
      store.catch(() => this.kept.delete(warehouseId));
      this.kept.set(warehouseId, store);
    }
    return store;
  }

  private async open(warehouseId: string): Promise<ObjectStore> {
    const [warehouse] = await openWarehouses(this.db, this.box, [warehouseId]);
    if (!warehouse) throw new Error(`warehouse ${warehouseId} is not registered`);
    const placement = intakePlacement(warehouse, this.platform.bucket);
    if (placement.identity === 'platform') return this.platform;
    const { endpoint, region, accessKeyId, secretAccessKey } = warehouse.s3;
    const client = createS3Client({ endpoint, region, ...(accessKeyId && secretAccessKey ? { credentials: { accessKeyId, secretAccessKey } } : {}) });
    this.clients.push(client);
    return new ObjectStore(client, placement.bucket);
  }

  /** Ends the warehouses' clients (the platform's is the caller's); for the app's close. */
  close(): void {
    this.kept.clear();
    for (const client of this.clients.splice(0)) client.destroy();
  }
}
