import { CreatedSink } from '@tablemere/contracts';
import { sinkPrefix, type ObjectStore } from '@tablemere/store';
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { buildApp, type AppDeps } from '../../src/app.ts';
import { createLogger } from '../../src/logger.ts';
import { SecretBox } from '../../src/domain/secrets.ts';
import { answerOf, call, stackS3, type Answer, type TestApi } from './harness.ts';

/** Removes every intake object of a sink (its batches, rejects and sidecars): a test's clean-up. */
export async function clearSinkObjects(intake: ObjectStore, sinkId: string): Promise<void> {
  const keys: string[] = [];
  for await (const page of intake.list(sinkPrefix(sinkId))) keys.push(...page.objects.map((o) => o.key));
  await intake.deleteMany(keys);
}

/** An unpartitioned table through the API: `x long required, who string`. */
export async function createTable(api: TestApi, namespace: string, name: string): Promise<void> {
  const res = await call(api.app, 'POST', '/v1/warehouses/garden/tables', {
    key: api.adminKey,
    body: { namespace, name, columns: [{ name: 'x', type: 'long', required: true }, { name: 'who', type: 'string' }] },
  });
  expect(res.status, res.text).toBe(201);
}

export async function createSink(
  app: FastifyInstance,
  key: string,
  body: { name: string; table: string; warehouse?: string; [option: string]: unknown },
): Promise<CreatedSink> {
  const res = await call(app, 'POST', '/v1/sinks', { key, body: { warehouse: 'garden', ...body } });
  expect(res.status, res.text).toBe(201);
  return CreatedSink.parse(res.body);
}

export interface SendOptions {
  batchId?: string | undefined;
  /** The send key; the sink's own by default. */
  key?: string;
  headers?: Record<string, string>;
}

let batchCounter = 0;
/** A batch id nobody else uses. */
export const newBatchId = () => `b-${process.pid}-${Date.now()}-${++batchCounter}`;

/** POST /v1/sinks/{id} with a raw body (a string or bytes, sent as is). */
export async function send(app: FastifyInstance, sink: { id: string; send_key: string }, body: string | Buffer, options: SendOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  const batchId = 'batchId' in options ? options.batchId : newBatchId();
  if (batchId !== undefined) headers['idempotency-key'] = batchId;
  headers.authorization = `Bearer ${options.key ?? sink.send_key}`;
  const response = await app.inject({ method: 'POST', url: `/v1/sinks/${sink.id}`, headers, payload: body });
  return answerOf(response);
}

/**
 * A second app over the test API's database (its project, keys and sinks), with other
 * deps: another store, other caps, sinks off. Logs are captured like the harness does.
 */
export async function otherApp(api: TestApi, overrides: Partial<AppDeps>): Promise<{ app: FastifyInstance; rawLogs: string[]; close(): Promise<void> }> {
  const rawLogs: string[] = [];
  const s3 = stackS3(api.env);
  const app = buildApp({
    logger: createLogger({ level: 'debug', destination: { write: (line: string) => void rawLogs.push(line) } }),
    pool: api.pool,
    s3,
    secrets: SecretBox.fromBase64(api.secretKey),
    intakeBucket: api.env.TABLEMERE_INTAKE_BUCKET!,
    publicUrl: 'http://api.test:8787/',
    ...overrides,
  });
  await app.ready();
  return {
    app,
    rawLogs,
    async close() {
      await app.close();
      s3.destroy();
    },
  };
}
