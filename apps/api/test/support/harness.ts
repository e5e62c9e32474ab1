import { randomBytes } from 'node:crypto';
import { CreateBucketCommand, HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { createDatabase, createPool, dropDatabase, endPool, migrate, type Pool } from '@tablemere/db';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { dropNamespaces, stackCatalog, stackEnv, stackWarehouse } from '../../../../tests/support/stack.ts';
import { buildApp } from '../../src/app.ts';
import { bootstrap, type BootstrapOptions } from '../../src/bootstrap.ts';
import { SecretBox } from '../../src/domain/secrets.ts';
import { createLogger } from '../../src/logger.ts';

export interface TestApi {
  app: FastifyInstance;
  pool: Pool;
  databaseUrl: string;
  env: Record<string, string>;
  secretKey: string;
  /** The bootstrap admin key. */
  adminKey: string;
  /** Every log line the app wrote, parsed. */
  logs: Array<Record<string, unknown>>;
  /** Every log line as written, for raw searches. */
  rawLogs: string[];
  close(): Promise<void>;
}

export const suffix = () => randomBytes(4).toString('hex');

export function stackS3(env: Record<string, string>): S3Client {
  return new S3Client({
    endpoint: env.AWS_ENDPOINT_URL!,
    region: env.AWS_REGION!,
    forcePathStyle: true,
    credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID!, secretAccessKey: env.AWS_SECRET_ACCESS_KEY! },
  });
}


/** The intake bucket is the stack's; make sure it is there so readiness can see it. */
async function ensureBucket(s3: S3Client, bucket: string): Promise<void> {
  try {
    await s3.send(new HeadBucketCommand({ Bucket: bucket }));
  } catch {
    await s3.send(new CreateBucketCommand({ Bucket: bucket })).catch((error: { name?: string }) => {
      if (error.name !== 'BucketAlreadyOwnedByYou' && error.name !== 'BucketAlreadyExists') throw error;
    });
  }
}

export interface TestApiOptions {
  /** The bootstrap warehouse; the stack's by default. */
  warehouse?: BootstrapOptions['warehouse'];
  intakeBucket?: string;
  readinessTimeoutMs?: number;
  bodyLimit?: number;
  /** The bound on each statement (TABLEMERE_DB_TIMEOUT_MS); none by default. */
  dbTimeoutMs?: number;
}

/**
 * The app wired to the real stack: a fresh database (created and migrated for this file),
 * the stack's store and catalog, a bootstrap project with an admin key, logs captured.
 */
export async function startTestApi(options: TestApiOptions = {}): Promise<TestApi> {
  const env = stackEnv();
  const url = new URL(env.DATABASE_URL!);
  url.pathname = `/api_test_${suffix()}`;
  const databaseUrl = url.toString();
  await createDatabase(databaseUrl);
  await migrate(databaseUrl);
  const pool = createPool(databaseUrl, { applicationName: 'api-test', ...(options.dbTimeoutMs ? { queryTimeoutMillis: options.dbTimeoutMs } : {}) });
  const secretKey = randomBytes(32).toString('base64');
  const boot = await bootstrap(pool, { secretKey, warehouse: options.warehouse ?? stackWarehouse(env) });
  const s3 = stackS3(env);
  const intakeBucket = options.intakeBucket ?? env.TABLEMERE_INTAKE_BUCKET!;
  if (options.intakeBucket === undefined) await ensureBucket(s3, intakeBucket);

  const rawLogs: string[] = [];
  const logs: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    level: 'debug',
    destination: {
      write(line: string) {
        rawLogs.push(line);
        logs.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  });
  const app = buildApp({
    logger,
    pool,
    s3,
    secrets: SecretBox.fromBase64(secretKey),
    intakeBucket,
    publicUrl: 'http://api.test:8787/',
    ...(options.readinessTimeoutMs ? { readinessTimeoutMs: options.readinessTimeoutMs } : {}),
    ...(options.bodyLimit ? { bodyLimit: options.bodyLimit } : {}),
  });
  await app.ready();
  return {
    app,
    pool,
    databaseUrl,
    env,
    secretKey,
    adminKey: boot.adminKey!,
    logs,
    rawLogs,
    async close() {
      await app.close();
      await endPool(pool);
      s3.destroy();
      await dropDatabase(databaseUrl);
    },
  };
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: any;
  text: string;
}

export interface CallOptions {
  key?: string;
  body?: unknown;
  /** Sent as is, with no JSON encoding. */
  payload?: string;
  headers?: Record<string, string>;
}

/** One request through `inject()`; JSON bodies are encoded and answers decoded. */
export async function call(app: FastifyInstance, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, options: CallOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let payload = options.payload;
  if (options.body !== undefined) {
    payload = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  return answerOf(await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) }));
}

/** An injected response as an Answer: its body parsed as JSON when it is JSON. */
export function answerOf(response: LightMyRequestResponse): Answer {
  let body: unknown;
  try {
    body = response.json();
  } catch {
    body = undefined;
  }
  return { status: response.statusCode, headers: response.headers, body, text: response.body };
}

/** Drops a test namespace and its tables from the stack's catalog. */
export async function dropNamespace(env: Record<string, string>, namespace: string): Promise<void> {
  await dropNamespaces(await stackCatalog(env), [namespace]);
}
