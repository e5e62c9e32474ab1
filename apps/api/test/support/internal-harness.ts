import { randomBytes } from 'node:crypto';
import { query, queryOne, type Pool } from '@tablemere/db';
import type { FastifyInstance } from 'fastify';
import { buildApp, buildInternalApp } from '../../src/app.ts';
import { SecretBox } from '../../src/domain/secrets.ts';
import { ApiMetrics } from '../../src/http/metrics.ts';
import { answerOf, startTestApi, stackS3, suffix, type Answer, type TestApi } from './harness.ts';
import { bodyDigest } from '../../src/domain/intake/body-digest.ts';

export interface InternalTestApi extends TestApi {
  /** The roller's app, on the same database. */
  internal: FastifyInstance;
  /** Its bootstrap secret. */
  secret: string;
  /** The bootstrap project and its warehouse. */
  projectId: string;
  warehouseId: string;
  /** Calls the internal app with the bootstrap secret. */
  callInternal(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown): Promise<Answer>;
  /** Another public app and internal app on the same database, e.g. with sinks disabled. */
  variant(options: { sinksEnabled: boolean; metrics?: ApiMetrics }): { app: FastifyInstance; internal: FastifyInstance };
}

/** The test API of `startTestApi`, plus the internal app the roller talks to. */
export async function startInternalTestApi(): Promise<InternalTestApi> {
  const api = await startTestApi();
  const secret = `internal-test-secret-${suffix()}`;
  const secrets = SecretBox.fromBase64(api.secretKey);
  const intakeBucket = api.env.TABLEMERE_INTAKE_BUCKET!;
  const s3 = stackS3(api.env);
  const extra: FastifyInstance[] = [];
  const internalFor = (sinksEnabled: boolean) =>
    buildInternalApp({ logger: api.app.log, pool: api.pool, secrets, intakeBucket, bootstrapSecret: secret, sinksEnabled });
  const internal = internalFor(true);
  await internal.ready();
  const ids = (await queryOne<{ project_id: string; id: string }>(api.pool, 'SELECT project_id, id FROM warehouses ORDER BY created_at LIMIT 1'))!;
  return {
    ...api,
    internal,
    secret,
    projectId: ids.project_id,
    warehouseId: ids.id,
    callInternal: (method, url, body) => injectJson(internal, method, url, { authorization: `Bearer ${secret}` }, body),
    variant({ sinksEnabled, metrics }) {
      const app = buildApp({
        logger: api.app.log,
        pool: api.pool,
        s3,
        secrets,
        intakeBucket,
        publicUrl: 'http://api.test:8787/',
        sinksEnabled,
        ...(metrics ? { metrics } : {}),
      });
      const internalApp = internalFor(sinksEnabled);
      extra.push(app, internalApp);
      return { app, internal: internalApp };
    },
    async close() {
      for (const app of extra) await app.close();
      await internal.close();
      s3.destroy();
      await api.close();
    },
  };
}

/** One request through `inject()` with any method; JSON in and out. */
export async function injectJson(
  app: FastifyInstance,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<Answer> {
  const response = await app.inject({
    method,
    url,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
  return answerOf(response);
}

export interface SinkRow {
  name?: string;
  roll_seconds?: number;
  roll_bytes?: number;
  inactivity_seconds?: number | null;
  state?: 'active' | 'table_missing' | 'deleted';
}

/**
 * A sink row written straight into the database (no catalog call): enough for everything
 * the roller's side reads. Returns its id.
 */
export async function insertSink(db: Pool, api: Pick<InternalTestApi, 'projectId' | 'warehouseId'>, sink: SinkRow = {}): Promise<string> {
  const id = `snk_${randomBytes(6).toString('hex')}`;
  const state = sink.state ?? 'active';
  await query(
    db,
    `INSERT INTO sinks (id, project_id, warehouse_id, name, namespace, table_name, table_uuid, roll_seconds, roll_bytes,
                        inactivity_seconds, send_key_sha256, state, deleted_at)
     VALUES ($1, $2, $3, $4, 'ns', $5, gen_random_uuid()::text, $6, $7, $8, $9, $10, CASE WHEN $10 = 'deleted' THEN now() END)`,
    [
      id,
      api.projectId,
      api.warehouseId,
      sink.name ?? `sink-${id.slice(4)}`,
      `t_${id.slice(4)}`,
      sink.roll_seconds ?? 300,
      sink.roll_bytes ?? 64 * 1024 * 1024,
      sink.inactivity_seconds ?? null,
      randomBytes(32),
      state,
    ],
  );
  return id;
}

export interface BatchRow {
  batch_id: string;
  /** How long ago it was received. */
  age_seconds?: number;
  bytes?: number;
  rows?: number;
  rejected?: number;
  state?: 'storing' | 'pending' | 'committed' | 'discarded';
  /** For committed/discarded rows: how long ago they settled. */
  settled_seconds_ago?: number;
  /** On the ledger day this many days before today (UTC; its partition is created), instead of the claims' current day. */
  ledger_days_ago?: number;
}

/** Ledger rows written straight into sink_batches, with chosen received times. */
export async function insertBatches(db: Pool, sinkId: string, batches: BatchRow[]): Promise<void> {
  for (const batch of batches) {
    const state = batch.state ?? 'pending';
    const settled = `now() - make_interval(secs => ${Number(batch.settled_seconds_ago ?? 0)})`;
    const day = batch.ledger_days_ago === undefined ? '(SELECT day FROM sink_ledger_today)' : `(now() AT TIME ZONE 'UTC')::date - ${Number(batch.ledger_days_ago)}`;
    if (batch.ledger_days_ago !== undefined) await query(db, `SELECT sink_ledger_add_day(${day})`);
    await query(
      db,
      `INSERT INTO sink_batches (ledger_day, sink_id, batch_id, body_digest, bytes, rows, rejected, received_at, state, committed_at, discarded_at)
       VALUES (${day}, $1, $2, $3, $4, $5, $6, now() - make_interval(secs => $7), $8,
               ${state === 'committed' ? settled : 'NULL'}, ${state === 'discarded' ? settled : 'NULL'})`,
      [
        sinkId,
        batch.batch_id,
        bodyDigest(Buffer.from(batch.batch_id), 'array'),
        batch.bytes ?? 100,
        batch.rows ?? 1,
        batch.rejected ?? 0,
        batch.age_seconds ?? 0,
        state,
      ],
    );
  }
}
