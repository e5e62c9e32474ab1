import { BatchStatus, Connection, CreatedSink, DeletedSink, PendingRows, SendResult, Sink, SinkList, type ColumnInput } from '@tablemere/contracts';
import { suffix, type TestStack } from './stack.ts';

async function call(stack: TestStack, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${stack.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${stack.adminKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}

/** One API request with the admin key; fails unless answered `status`, and parses the answer. */
async function answered<T>(stack: TestStack, what: string, method: string, path: string, status: number, schema: { parse(value: unknown): T }, body?: unknown): Promise<T> {
  const answer = await call(stack, method, path, body);
  if (answer.status !== status) throw new Error(`${what}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return schema.parse(answer.body);
}

/** Whatever the route answers: for answers a test does not read. */
const anything = { parse: (value: unknown) => value };

/** Creates an unpartitioned table through the API, in the stack's warehouse unless told. */
export async function createTable(stack: TestStack, namespace: string, name: string, columns: ColumnInput[], warehouse = stack.warehouse): Promise<void> {
  await answered(stack, 'create table', 'POST', `/v1/warehouses/${warehouse}/tables`, 201, anything, { namespace, name, columns });
}

export function createSink(stack: TestStack, name: string, table: string, policy: Record<string, unknown> = {}, warehouse = stack.warehouse): Promise<CreatedSink> {
  return answered(stack, 'create sink', 'POST', '/v1/sinks', 201, CreatedSink, { name, table, warehouse, ...policy });
}

/** PATCH /v1/sinks/{id}: changes the sink's settings (e.g. its snapshot retention). */
export function updateSink(stack: TestStack, sinkId: string, settings: Record<string, unknown>): Promise<Sink> {
  return answered(stack, 'update sink', 'PATCH', `/v1/sinks/${sinkId}`, 200, Sink, settings);
}

/** Registers a warehouse (POST /v1/warehouses) with the request body given. */
export async function createWarehouse(stack: TestStack, body: Record<string, unknown>): Promise<void> {
  await answered(stack, 'create warehouse', 'POST', '/v1/warehouses', 201, anything, body);
}

/** GET /v1/connection for a warehouse (the stack's unless told). */
export function connection(stack: TestStack, warehouse = stack.warehouse): Promise<Connection> {
  return answered(stack, 'connection', 'GET', `/v1/connection?warehouse=${warehouse}`, 200, Connection);
}

/** GET /v1/sinks/{id}/pending: the newest rows waiting, read from the sink's intake. */
export function pendingRows(stack: TestStack, sinkId: string): Promise<PendingRows> {
  return answered(stack, 'pending rows', 'GET', `/v1/sinks/${sinkId}/pending`, 200, PendingRows);
}

/** DELETE /v1/sinks/{id}: the pending batches are discarded and removed from the intake. */
export function deleteSink(stack: TestStack, sinkId: string): Promise<DeletedSink> {
  return answered(stack, 'delete sink', 'DELETE', `/v1/sinks/${sinkId}`, 202, DeletedSink);
}

export function batchStatus(stack: TestStack, sinkId: string, batchId: string): Promise<BatchStatus> {
  return answered(stack, 'batch status', 'GET', `/v1/sinks/${sinkId}/batches/${batchId}`, 200, BatchStatus);
}

export function getSink(stack: TestStack, sink: string): Promise<Sink> {
  return answered(stack, 'get sink', 'GET', `/v1/sinks/${sink}`, 200, Sink);
}

export async function listSinks(stack: TestStack, query: Record<string, string> = {}): Promise<Sink[]> {
  return (await answered(stack, 'list sinks', 'GET', `/v1/sinks?${new URLSearchParams(query)}`, 200, SinkList)).sinks;
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

/**
 * A sink on a new table `events (x long required, who string)` in a namespace of its own
 * (`<prefix>_<random>`, added to `namespaces` for the file's clean-up).
 */
export async function sinkOnNewTable(stack: TestStack, namespaces: string[], prefix: string, policy: Record<string, unknown> = {}): Promise<{ ns: string; sink: CreatedSink }> {
  const ns = `${prefix}_${suffix()}`;
  namespaces.push(ns);
  await createTable(stack, ns, 'events', [
    { name: 'x', type: 'long', required: true },
    { name: 'who', type: 'string' },
  ]);
  return { ns, sink: await createSink(stack, `${prefix}_${suffix()}`, `${ns}.events`, policy) };
}
