import type { Warehouse } from '@tablemere/contracts';
import { createPool, query, queryOne, transaction, type Pool } from '@tablemere/db';
import { createApiKey } from './domain/api-keys.ts';
import { ensureProject } from './domain/projects.ts';
import { SecretBox } from './domain/secrets.ts';
import { createWarehouse, listWarehouses, type WarehouseSettings } from './domain/warehouses.ts';

export interface BootstrapOptions {
  /** TABLEMERE_SECRET_KEY (32 bytes, base64): seals the warehouse's secrets. */
  secretKey: string;
  /** Default `default`. */
  projectName?: string;
  /** Default `bootstrap`. */
  adminKeyName?: string;
  /** The warehouse to register; `name` defaults to `garden`, `warehouse` to `s3://warehouse`. */
  warehouse: Omit<WarehouseSettings, 'name' | 'warehouse'> & { name?: string; warehouse?: string };
}

export interface BootstrapResult {
  projectId: string;
  adminKeyId: string;
  /** The plaintext admin key: only when this call created it (it is never stored). */
  adminKey: string | undefined;
  warehouse: Warehouse;
  created: { project: boolean; adminKey: boolean; warehouse: boolean };
}

/** Any fixed number: serialises concurrent bootstraps of one database. */
const BOOTSTRAP_LOCK_ID = '7301942016734';

/**
 * Creates, when missing, one project, one admin API key and one warehouse. Idempotent and
 * safe to run concurrently; an existing key or warehouse is left as it is. `db` is a
 * Postgres URL (a pool is opened and closed) or a pool the caller owns. Run `migrate` first.
 */
export async function bootstrap(db: string | Pool, options: BootstrapOptions): Promise<BootstrapResult> {
  const box = SecretBox.fromBase64(options.secretKey);
  const pool = typeof db === 'string' ? createPool(db, { applicationName: 'tablemere-bootstrap', max: 1 }) : db;
  try {
    return await transaction(pool, async (client) => {
      await query(client, 'SELECT pg_advisory_xact_lock($1)', [BOOTSTRAP_LOCK_ID]);
      const project = await ensureProject(client, options.projectName ?? 'default');

      let adminKeyId: string;
      let adminKey: string | undefined;
      const existingKey = await queryOne<{ id: string }>(
        client,
        `SELECT id FROM api_keys WHERE project_id = $1 AND level = 'admin' AND revoked_at IS NULL ORDER BY created_at, id LIMIT 1`,
        [project.id],
      );
      if (existingKey) {
        adminKeyId = existingKey.id;
      } else {
        const created = await createApiKey(client, project.id, { name: options.adminKeyName ?? 'bootstrap', level: 'admin' }, null);
        adminKeyId = created.id;
        adminKey = created.key;
      }

      const name = options.warehouse.name ?? 'garden';
      let warehouse = (await listWarehouses(client, project.id)).find((w) => w.name === name);
      const warehouseCreated = warehouse === undefined;
      warehouse ??= await createWarehouse(
        client,
        box,
        project.id,
        { ...options.warehouse, name, warehouse: options.warehouse.warehouse ?? 's3://warehouse' },
        null,
      );

      return {
        projectId: project.id,
        adminKeyId,
        adminKey,
        warehouse,
        created: { project: project.created, adminKey: adminKey !== undefined, warehouse: warehouseCreated },
      };
    });
  } finally {
    if (typeof db === 'string') await pool.end();
  }
}
