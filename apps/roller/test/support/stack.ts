import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { S3Client } from '@aws-sdk/client-s3';
import { createDatabase, createPool, dropDatabase, endPool, migrate, type Pool } from '@tablemere/db';
import type { RestCatalog } from '@tablemere/iceberg';
import { createS3Client, ObjectStore } from '@tablemere/store';
import type { FastifyInstance } from 'fastify';
import { buildApp, buildInternalApp } from '../../../api/src/app.ts';
import { bootstrap } from '../../../api/src/bootstrap.ts';
import { SecretBox } from '../../../api/src/domain/secrets.ts';
import type { AppDeps } from '../../../api/src/deps.ts';
import { createLogger } from '../../../api/src/logger.ts';
import { dropNamespaces, stackCatalog, stackEnv, stackWarehouse } from '../../../../tests/support/stack.ts';
import { type Server, startBenchApi } from '../../../../scripts/bench/api-process.ts';

export const suffix = () => randomBytes(4).toString('hex');

export interface TestStack {
  env: Record<string, string>;
  /** The public API, e.g. http://127.0.0.1:40123 */
  apiUrl: string;
  /** The internal listener the roller talks to. */
  internalUrl: string;
  bootstrapSecret: string;
  adminKey: string;
  warehouse: string;
  pool: Pool;
  /** The stack's catalog as the tenant (the warehouse's own credentials). */
  catalog: RestCatalog;
  /** The intake bucket with platform credentials. */
  intake: ObjectStore;
  /** Environment for a roller process or the operator command against this API. */
  rollerEnv(extra?: Record<string, string>): Record<string, string>;
  /** Another API on the same database (its own pool and ports), as a second API process would be. */
  anotherApi(): Promise<ApiInstance>;
  /** The API as its own process on the same database (apps/api/src/start.ts), with `env` added: one a test may kill. */
  apiProcess(name: string, env?: NodeJS.ProcessEnv): Promise<Server>;
  /** Drops the namespaces (a test file's own) with every table in them; what is already gone is fine. */
  dropNamespaces(namespaces: readonly string[]): Promise<void>;
  stop(): Promise<void>;
}

export interface ApiInstance {
  apiUrl: string;
  internalUrl: string;
  stop(): Promise<void>;
}

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

/**
 * The real API on two real ports (public and internal), a fresh migrated database with one
 * bootstrap project whose warehouse is the stack's catalog, and the stack's intake bucket.
 * `env` points it at another store and catalog than the running stack's; `sinksEnabled: false`
 * is TABLEMERE_SINKS_ENABLED=false; `limits` the send route's backlog and in-flight caps.
 */
export async function startTestStack(
  options: { env?: Record<string, string>; sinksEnabled?: boolean; limits?: Pick<AppDeps, 'sinkBacklog' | 'sendInFlight'> } = {},
): Promise<TestStack> {
  const env = options.env ?? stackEnv();
  const url = new URL(env.DATABASE_URL!);
  url.pathname = `/roller_test_${suffix()}`;
  const databaseUrl = url.toString();
  await createDatabase(databaseUrl);
  await migrate(databaseUrl);
  const pool = createPool(databaseUrl, { applicationName: 'roller-test' });
  const secretKey = randomBytes(32).toString('base64');
  const warehouse = 'garden';
  const boot = await bootstrap(pool, {
    secretKey,
    warehouse: { ...stackWarehouse(env), name: warehouse },
  });
  const s3 = new S3Client({
    endpoint: env.AWS_ENDPOINT_URL!,
    region: env.AWS_REGION!,
    forcePathStyle: true,
    credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID!, secretAccessKey: env.AWS_SECRET_ACCESS_KEY! },
  });
  const logger = createLogger({ level: 'warn' });
  const secrets = SecretBox.fromBase64(secretKey);
  const bootstrapSecret = randomBytes(24).toString('base64url');
  const intakeBucket = env.TABLEMERE_INTAKE_BUCKET!;
  const sinksEnabled = options.sinksEnabled ?? true;
  /** The public and internal listeners on `apiPool`. */
  const serve = async (apiPool: Pool) => {
    const internal = buildInternalApp({ logger, pool: apiPool, secrets, intakeBucket, bootstrapSecret, sinksEnabled });
    const internalUrl = await listen(internal);
    // The public URL shows in answers (ingest_url), so the port is known before the app is built.
    const app = buildApp({ logger, pool: apiPool, s3, secrets, intakeBucket, publicUrl: 'http://127.0.0.1', sinksEnabled, ...options.limits });
    const apiUrl = await listen(app);
    return { apiUrl, internalUrl, close: () => Promise.all([app.close(), internal.close()]) };
  };
  const { apiUrl, internalUrl, close } = await serve(pool);

  const catalog = await stackCatalog(env);
  const storeClient = createS3Client({
    endpoint: env.AWS_ENDPOINT_URL!,
    region: env.AWS_REGION!,
    credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID!, secretAccessKey: env.AWS_SECRET_ACCESS_KEY! },
  });
  return {
    env,
    apiUrl,
    internalUrl,
    bootstrapSecret,
    adminKey: boot.adminKey!,
    warehouse,
    pool,
    catalog,
    intake: new ObjectStore(storeClient, intakeBucket),
    rollerEnv: (extra = {}) => ({
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      TABLEMERE_INTERNAL_URL: internalUrl,
      TABLEMERE_BOOTSTRAP_SECRET: bootstrapSecret,
      AWS_ENDPOINT_URL: env.AWS_ENDPOINT_URL!,
      AWS_REGION: env.AWS_REGION!,
      AWS_ACCESS_KEY_ID: env.AWS_ACCESS_KEY_ID!,
      AWS_SECRET_ACCESS_KEY: env.AWS_SECRET_ACCESS_KEY!,
      TABLEMERE_ROLLER_PORT: '0',
      LOG_LEVEL: 'info',
      ...extra,
    }),
    apiProcess: (name, extra = {}) => startBenchApi(name, databaseUrl, secretKey, { env: { TABLEMERE_SINK_MAX_PENDING_BATCHES: '10000', ...extra } }),
    async anotherApi() {
      const otherPool = createPool(databaseUrl, { applicationName: 'roller-test-2' });
      const other = await serve(otherPool);
      return {
        apiUrl: other.apiUrl,
        internalUrl: other.internalUrl,
        async stop() {
          await other.close();
          await endPool(otherPool);
        },
      };
    },
    dropNamespaces: (namespaces) => dropNamespaces(catalog, namespaces),
    async stop() {
      await close();
      await endPool(pool);
      s3.destroy();
      storeClient.destroy();
      await dropDatabase(databaseUrl);
    },
  };
}
