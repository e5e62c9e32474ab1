import { BatchStatus, Connection, CreatedSink, DeletedSink, PendingRows, SendResult, Sink, type ColumnInput } from '@tablemere/contracts';
import type { TestStack } from './stack.ts';

async function call(stack: TestStack, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${stack.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${stack.adminKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}

function expectStatus(what: string, answer: { status: number; body: unknown }, ...ok: number[]): void {
  if (!ok.includes(answer.status)) throw new Error(`${what}: ${answer.status} ${JSON.stringify(answer.body)}`);
}

/** Creates an unpartitioned table through the API, in the stack's warehouse unless told. */
export async function createTable(stack: TestStack, namespace: string, name: string, columns: ColumnInput[], warehouse = stack.warehouse): Promise<void> {
  const answer = await call(stack, 'POST', `/v1/warehouses/${warehouse}/tables`, { namespace, name, columns });
  expectStatus('create table', answer, 201);
}

export async function createSink(stack: TestStack, name: string, table: string, policy: Record<string, number> = {}, warehouse = stack.warehouse): Promise<CreatedSink> {
  const answer = await call(stack, 'POST', '/v1/sinks', { name, table, warehouse, ...policy });
  expectStatus('create sink', answer, 201);
  return CreatedSink.parse(answer.body);
}

/** Registers a warehouse (POST /v1/warehouses) with the request body given. */
export async function createWarehouse(stack: TestStack, body: Record<string, unknown>): Promise<void> {
  expectStatus('create warehouse', await call(stack, 'POST', '/v1/warehouses', body), 201);
}

/** GET /v1/connection for a warehouse (the stack's unless told). */
export async function connection(stack: TestStack, warehouse = stack.warehouse): Promise<Connection> {
  const answer = await call(stack, 'GET', `/v1/connection?warehouse=${warehouse}`);
  expectStatus('connection', answer, 200);
  return Connection.parse(answer.body);
}

/** GET /v1/sinks/{id}/pending: the newest rows waiting, read from the sink's intake. */
export async function pendingRows(stack: TestStack, sinkId: string): Promise<PendingRows> {
  const answer = await call(stack, 'GET', `/v1/sinks/${sinkId}/pending`);
  expectStatus('pending rows', answer, 200);
  return PendingRows.parse(answer.body);
}

/** DELETE /v1/sinks/{id}: the pending batches are discarded and removed from the intake. */
export async function deleteSink(stack: TestStack, sinkId: string): Promise<DeletedSink> {
  const answer = await call(stack, 'DELETE', `/v1/sinks/${sinkId}`);
  expectStatus('delete sink', answer, 202);
  return DeletedSink.parse(answer.body);
}

export async function batchStatus(stack: TestStack, sinkId: string, batchId: string): Promise<BatchStatus> {
  const answer = await call(stack, 'GET', `/v1/sinks/${sinkId}/batches/${batchId}`);
  expectStatus('batch status', answer, 200);
  return BatchStatus.parse(answer.body);
}

export async function getSink(stack: TestStack, sink: string): Promise<Sink> {
  const answer = await call(stack, 'GET', `/v1/sinks/${sink}`);
  expectStatus('get sink', answer, 200);
  return Sink.parse(answer.body);
}

/** Sends one batch with the send key, as a producer does: a JSON array of (here) objects. */
export async function send(stack: TestStack, sink: CreatedSink, batchId: string, body: string | unknown[]): Promise<SendResult> {
  const res = await fetch(`${stack.apiUrl}/v1/sinks/${sink.id}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${sink.send_key}`, 'idempotency-key': batchId, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 202) throw new Error(`send ${batchId}: ${res.status} ${text}`);
  return SendResult.parse(JSON.parse(text));
}
