import { randomUUID } from 'node:crypto';
import { catalogAuthFromWire, type CreateWarehouseRequest, type UpdateWarehouseRequest, type Warehouse } from '@tablemere/contracts';
import { isPgError, PgErrorCode, query, queryOne, type PoolClient, type Queryable } from '@tablemere/db';
import type { CatalogAuth } from '@tablemere/iceberg';
import { apiError, warehouseNotFound } from '../errors.ts';
import { recordAudit } from './audit.ts';
import type { SecretBox } from './secrets.ts';

export interface S3Settings {
  endpoint: string;
  region: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  /** An ordinary bucket of the warehouse for its sinks' `_sink/`, written with these credentials. */
  sinkBucket?: string;
}

/** A catalog registration as the domain holds it, secrets in clear: never rendered. */
export interface WarehouseSettings {
  name: string;
  restUri: string;
  warehouse: string;
  auth: CatalogAuth;
  s3: S3Settings;
}

/** A stored warehouse with its secrets opened: what talking to its catalog and files needs. */
export interface WarehouseAccess extends WarehouseSettings {
  id: string;
  projectId: string;
}

interface WarehouseRow {
  id: string;
  project_id: string;
  name: string;
  rest_uri: string;
  warehouse: string;
  auth_type: CatalogAuth['type'];
  auth_sealed: Buffer | null;
  s3_endpoint: string;
  s3_region: string;
  s3_sealed: Buffer | null;
  sink_bucket: string | null;
  created_at: Date;
}

/** Sealed values are bound to their row and column (see SecretBox). */
const authContext = (id: string) => `warehouses/${id}/auth`;
const s3Context = (id: string) => `warehouses/${id}/s3`;

/** The request's snake_case wire form to the domain's settings. */
export function settingsFromRequest(body: CreateWarehouseRequest): WarehouseSettings {
  const { auth, s3 } = body;
  return {
    name: body.name,
    restUri: body.rest_uri.replace(/\/+$/, ''),
    warehouse: body.warehouse,
    auth: catalogAuthFromWire(auth),
    s3: {
      endpoint: s3.endpoint.replace(/\/+$/, ''),
      region: s3.region,
      ...(s3.access_key_id && s3.secret_access_key ? { accessKeyId: s3.access_key_id, secretAccessKey: s3.secret_access_key } : {}),
      ...(s3.sink_bucket ? { sinkBucket: s3.sink_bucket } : {}),
    },
  };
}

function toWarehouse(row: WarehouseRow): Warehouse {
  return {
    id: row.id,
    name: row.name,
    rest_uri: row.rest_uri,
    warehouse: row.warehouse,
    auth: { type: row.auth_type },
    s3: { endpoint: row.s3_endpoint, region: row.s3_region, sink_bucket: row.sink_bucket },
    created_at: row.created_at.toISOString(),
  };
}

function openRow(row: WarehouseRow, box: SecretBox): WarehouseAccess {
  const auth: CatalogAuth = row.auth_sealed ? (JSON.parse(box.open(row.auth_sealed, authContext(row.id))) as CatalogAuth) : { type: 'none' };
  const credentials = row.s3_sealed
    ? (JSON.parse(box.open(row.s3_sealed, s3Context(row.id))) as Pick<S3Settings, 'accessKeyId' | 'secretAccessKey'>)
    : {};
  return {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    restUri: row.rest_uri,
    warehouse: row.warehouse,
    auth,
    s3: { endpoint: row.s3_endpoint, region: row.s3_region, ...credentials, ...(row.sink_bucket ? { sinkBucket: row.sink_bucket } : {}) },
  };
}

/**
 * Registers a warehouse and its audit event; 409 warehouse_exists when the project already has
 * the name. Run it in a transaction, so the row and its event commit together.
 */
export async function createWarehouse(
  db: PoolClient,
  box: SecretBox,
  projectId: string,
  settings: WarehouseSettings,
  actorKeyId: string | null,
): Promise<Warehouse> {
  const id = randomUUID();
  // The whole auth object is sealed, type included, so what opens is exactly what was given.
  const authSealed = settings.auth.type === 'none' ? null : box.seal(JSON.stringify(settings.auth), authContext(id));
  const { accessKeyId, secretAccessKey } = settings.s3;
  const s3Sealed = accessKeyId && secretAccessKey ? box.seal(JSON.stringify({ accessKeyId, secretAccessKey }), s3Context(id)) : null;
  let row: WarehouseRow | undefined;
  try {
    row = await queryOne<WarehouseRow>(
      db,
      `INSERT INTO warehouses (id, project_id, name, rest_uri, warehouse, auth_type, auth_sealed, s3_endpoint, s3_region, s3_sealed, sink_bucket)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
      [
        id,
        projectId,
        settings.name,
        settings.restUri,
        settings.warehouse,
        settings.auth.type,
        authSealed,
        settings.s3.endpoint,
        settings.s3.region,
        s3Sealed,
        settings.s3.sinkBucket ?? null,
      ],
    );
  } catch (error) {
    if (isPgError(error, PgErrorCode.uniqueViolation, 'warehouses_name_per_project')) {
      throw apiError('warehouse_exists', { details: { warehouse: settings.name } });
    }
    throw error;
  }
  await recordAudit(db, {
    projectId,
    actorKeyId,
    event: 'warehouse.create',
    subject: settings.name,
    details: { id, rest_uri: settings.restUri, auth_type: settings.auth.type, sink_bucket: settings.s3.sinkBucket ?? null },
  });
  return toWarehouse(row!);
}

/**
 * Changes a warehouse's endpoints or credentials (the row locked), re-sealing what it replaces,
 * and audits `warehouse.update` with what changed (secrets as "replaced", never their values).
 * Run it in a transaction. Processes reading the registration pick the change up on their next
 * read: the roller at its next tick, the API's intake stores within their freshness.
 */
export async function updateWarehouse(
  db: PoolClient,
  box: SecretBox,
  projectId: string,
  name: string,
  request: UpdateWarehouseRequest,
  actorKeyId: string | null,
): Promise<Warehouse> {
  const row = await queryOne<WarehouseRow>(db, 'SELECT * FROM warehouses WHERE project_id = $1 AND name = $2 FOR UPDATE', [projectId, name]);
  if (!row) throw warehouseNotFound(name);
  const before = openRow(row, box);
  const s3 = request.s3 ?? {};
  const auth = request.auth === undefined ? before.auth : catalogAuthFromWire(request.auth);
  const credentials =
    s3.access_key_id && s3.secret_access_key ? { accessKeyId: s3.access_key_id, secretAccessKey: s3.secret_access_key } : { accessKeyId: before.s3.accessKeyId, secretAccessKey: before.s3.secretAccessKey };
  const after = {
    restUri: request.rest_uri?.replace(/\/+$/, '') ?? before.restUri,
    warehouse: request.warehouse ?? before.warehouse,
    endpoint: s3.endpoint?.replace(/\/+$/, '') ?? before.s3.endpoint,
    region: s3.region ?? before.s3.region,
  };
  const authSealed = auth.type === 'none' ? null : box.seal(JSON.stringify(auth), authContext(row.id));
  const s3Sealed = credentials.accessKeyId && credentials.secretAccessKey ? box.seal(JSON.stringify(credentials), s3Context(row.id)) : null;
  const updated = await queryOne<WarehouseRow>(
    db,
    `UPDATE warehouses SET rest_uri = $2, warehouse = $3, auth_type = $4, auth_sealed = $5, s3_endpoint = $6, s3_region = $7, s3_sealed = $8
      WHERE id = $1 RETURNING *`,
    [row.id, after.restUri, after.warehouse, auth.type, authSealed, after.endpoint, after.region, s3Sealed],
  );
  const changed = (from: string, to: string) => (from === to ? undefined : { from, to });
  const changes = Object.fromEntries(
    Object.entries({
      rest_uri: changed(before.restUri, after.restUri),
      warehouse: changed(before.warehouse, after.warehouse),
      auth_type: changed(before.auth.type, auth.type),
      auth_credentials: request.auth === undefined ? undefined : 'replaced',
      s3_endpoint: changed(before.s3.endpoint, after.endpoint),
      s3_region: changed(before.s3.region, after.region),
      s3_credentials: s3.access_key_id === undefined ? undefined : 'replaced',
    }).filter(([, value]) => value !== undefined),
  );
  await recordAudit(db, { projectId, actorKeyId, event: 'warehouse.update', subject: name, details: { id: row.id, changes } });
  return toWarehouse(updated!);
}

export async function listWarehouses(db: Queryable, projectId: string): Promise<Warehouse[]> {
  const rows = await query<WarehouseRow>(db, 'SELECT * FROM warehouses WHERE project_id = $1 ORDER BY created_at, name', [projectId]);
  return rows.map(toWarehouse);
}

/** The project's warehouse by name, as the API shows it (no secret); 404 warehouse_not_found otherwise. */
export async function getWarehouse(db: Queryable, projectId: string, name: string): Promise<Warehouse> {
  const row = await queryOne<WarehouseRow>(db, 'SELECT * FROM warehouses WHERE project_id = $1 AND name = $2', [projectId, name]);
  if (!row) throw warehouseNotFound(name);
  return toWarehouse(row);
}

/** The project's warehouse by name with its secrets opened; 404 warehouse_not_found otherwise. */
export async function openWarehouse(db: Queryable, box: SecretBox, projectId: string, name: string): Promise<WarehouseAccess> {
  const row = await queryOne<WarehouseRow>(db, 'SELECT * FROM warehouses WHERE project_id = $1 AND name = $2', [projectId, name]);
  if (!row) throw warehouseNotFound(name);
  return openRow(row, box);
}

/** The project's first registered warehouse (the default when a route names none). */
export async function openDefaultWarehouse(db: Queryable, box: SecretBox, projectId: string): Promise<WarehouseAccess> {
  const row = await queryOne<WarehouseRow>(db, 'SELECT * FROM warehouses WHERE project_id = $1 ORDER BY created_at, name LIMIT 1', [projectId]);
  if (!row) {
    throw apiError('warehouse_not_found', { message: 'This project has no warehouse yet; register one with POST /v1/warehouses.' });
  }
  return openRow(row, box);
}

/**
 * Warehouses of any project with their secrets opened, for the platform's own work (the
 * roller's view, storage sweeps): those with the given ids, or every one when `ids` is omitted.
 */
export async function openWarehouses(db: Queryable, box: SecretBox, ids?: readonly string[]): Promise<WarehouseAccess[]> {
  const rows =
    ids === undefined
      ? await query<WarehouseRow>(db, 'SELECT * FROM warehouses ORDER BY created_at, id')
      : await query<WarehouseRow>(db, 'SELECT * FROM warehouses WHERE id = ANY($1::uuid[]) ORDER BY created_at, id', [ids]);
  return rows.map((row) => openRow(row, box));
}

/** The platform's first warehouse, any project: the catalog readiness checks. */
export async function openFirstWarehouse(db: Queryable, box: SecretBox): Promise<WarehouseAccess | undefined> {
  const row = await queryOne<WarehouseRow>(db, 'SELECT * FROM warehouses ORDER BY created_at, id LIMIT 1');
  return row ? openRow(row, box) : undefined;
}
