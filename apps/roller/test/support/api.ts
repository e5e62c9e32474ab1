import { CreatedSink, SendResult, Sink, SinkList, type ColumnInput } from '@tablemere/contracts';
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

/** Creates an unpartitioned table through the API. */
export async function createTable(stack: TestStack, namespace: string, name: string, columns: ColumnInput[]): Promise<void> {
  const answer = await call(stack, 'POST', `/v1/warehouses/${stack.warehouse}/tables`, { namespace, name, columns });
  expectStatus('create table', answer, 201);
}

export async function createSink(stack: TestStack, name: string, table: string, policy: Record<string, number> = {}): Promise<CreatedSink> {
  const answer = await call(stack, 'POST', '/v1/sinks', { name, table, warehouse: stack.warehouse, ...policy });
  expectStatus('create sink', answer, 201);
  return CreatedSink.parse(answer.body);
}

export async function getSink(stack: TestStack, sink: string): Promise<Sink> {
  const answer = await call(stack, 'GET', `/v1/sinks/${sink}`);
  expectStatus('get sink', answer, 200);
  return Sink.parse(answer.body);
}

export async function listSinks(stack: TestStack, query: Record<string, string> = {}): Promise<Sink[]> {
  const answer = await call(stack, 'GET', `/v1/sinks?${new URLSearchParams(query)}`);
  expectStatus('list sinks', answer, 200);
  return SinkList.parse(answer.body).sinks;
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
