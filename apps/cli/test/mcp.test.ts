import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import {
  BatchParams,
  BatchStatus,
  CreatedSink,
  CreatedTable,
  IDEMPOTENCY_KEY_PATTERN,
  PendingQuery,
  PendingRows,
  RejectsPage,
  RejectsQuery,
  SinkList,
  SinkListQuery,
  SinkParams,
} from '@tablemere/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { repoRoot, stackCatalog, stackEnv } from '../../../tests/support/stack.ts';
import { duckdbRows, pyicebergRows } from '../../roller/test/support/readers.ts';
import { ApiClient } from '../src/api-client.ts';
import { keyFileOf } from '../src/key-file.ts';
import { SentRows } from '../src/mcp/send-rows.ts';
import { DescribedSink } from '../src/mcp/server.ts';
import { startTestApi, type TestApi } from './support/api.ts';
import { dropNamespace } from './support/catalog.ts';
import { rollOnce } from './support/roller.ts';
import { cliBin, outsideDir, runCli } from './support/run-cli.ts';

const namespace = `cli_mcp_${randomBytes(4).toString('hex')}`;
const work = mkdtempSync(path.join(tmpdir(), 'tablemere-cli-mcp-'));
const keyFile = path.join(work, 'events-sink.json');
const toolNames = ['batch_status', 'describe_sink', 'list_sinks', 'read_rejects', 'send_rows', 'tail_rows'];
let api: TestApi;
let sink: CreatedSink;

const baseEnv = () => ({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' });
/** What an agent host passes: the API's URL and key (no .stack/env is found from the child's directory). */
const apiEnv = () => ({ ...baseEnv(), TABLEMERE_API_URL: api.url, TABLEMERE_API_KEY: api.adminKey });

/** `tablemere mcp` as a child process, driven by the TypeScript SDK's client. */
async function connect(args: string[], env: Record<string, string> = apiEnv()): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [cliBin, 'mcp', ...args], env, cwd: outsideDir(), stderr: 'pipe' });
  const client = new Client({ name: 'tablemere-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

interface ToolAnswer {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
}

/** Each tool's outputSchema as tools/list gives it, read once a client is connected. */
let outputSchemas: Record<string, object | undefined> = {};

const textOf = (result: ToolAnswer) => result.content.map((block) => block.text ?? '').join('');

/** A tool's answer: JSON, checked field by field by the tests. */
async function ok(pending: Promise<unknown>): Promise<any> {
  const result = (await pending) as ToolAnswer;
  expect({ isError: result.isError ?? false, text: result.isError ? textOf(result) : '' }).toEqual({ isError: false, text: '' });
  return JSON.parse(textOf(result));
}

async function refused(pending: Promise<unknown>): Promise<{ code: string; message: string }> {
  const result = (await pending) as ToolAnswer;
  expect(result.isError).toBe(true);
  return (JSON.parse(textOf(result)) as { error: { code: string; message: string } }).error;
}

const call = (client: Client, name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args });

/** A tool's answer read from its structuredContent: valid against the tool's listed outputSchema, and the same value as its text. */
async function structured(client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const result = (await call(client, name, args)) as ToolAnswer;
  const text = await ok(Promise.resolve(result));
  const schema = outputSchemas[name];
  expect(schema, name).toBeDefined();
  const checked = new AjvJsonSchemaValidator().getValidator(schema!)(result.structuredContent);
  expect({ name, valid: checked.valid, error: checked.errorMessage }).toEqual({ name, valid: true, error: undefined });
  expect(result.structuredContent).toEqual(text);
  return result.structuredContent;
}

beforeAll(async () => {
  api = await startTestApi();
  const admin = new ApiClient({ apiUrl: api.url, apiKey: api.adminKey });
  const columns = [
    { name: 'x', type: 'long', required: true },
    { name: 'who', type: 'string' },
  ];
  await admin.post(`/v1/warehouses/${api.warehouse}/tables`, { namespace, name: 'events', columns }, CreatedTable);
  sink = (await admin.post('/v1/sinks', { name: 'events_in', table: `${namespace}.events`, warehouse: api.warehouse }, CreatedSink)).value;
  writeFileSync(keyFile, JSON.stringify(keyFileOf(sink)), { mode: 0o600 });
});
afterAll(async () => {
  await api?.stop();
  await dropNamespace(namespace);
  // It holds a send key file.
  rmSync(work, { recursive: true, force: true });
});

/** Two accepted rows and one with a field the table lacks, which the roll rejects. */
const rows = [
  { x: 1, who: 'ada' },
  { x: 2, who: 'grace' },
  { x: 3, who: 'edsger', mood: 'curious' },
];
let batchId: string;

describe('tablemere mcp, driven by the TypeScript SDK client', () => {
  let client: Client;
  beforeAll(async () => {
    client = await connect(['--send-key-file', keyFile]);
    outputSchemas = Object.fromEntries((await client.listTools()).tools.map((t) => [t.name, t.outputSchema]));
  });
  afterAll(async () => client?.close());

  it('lists the six tools, each input schema the JSON Schema of the route\'s zod contract', async () => {
    expect(client.getInstructions()).toMatch(/^tablemere sinks: /);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(toolNames);
    const schema = (name: string) => tools.find((t) => t.name === name)!.inputSchema;
    const fromContract = (contract: z.ZodType) => z.toJSONSchema(contract, { target: 'draft-7', io: 'input' });
    expect(schema('list_sinks')).toEqual(fromContract(SinkListQuery));
    expect(schema('describe_sink')).toEqual(fromContract(SinkParams));
    expect(schema('batch_status')).toEqual(fromContract(BatchParams));
    expect(schema('tail_rows')).toEqual(fromContract(SinkParams.extend(PendingQuery.shape)));
    expect(schema('read_rejects')).toEqual(fromContract(SinkParams.extend(RejectsQuery.shape)));
    // Every answer's outputSchema is its zod contract's JSON Schema, as answered.
    const answerOf = (contract: z.ZodType) => z.toJSONSchema(contract, { target: 'draft-7', io: 'output' });
    expect(outputSchemas).toEqual({
      list_sinks: answerOf(SinkList),
      describe_sink: answerOf(DescribedSink),
      batch_status: answerOf(BatchStatus),
      tail_rows: answerOf(PendingRows),
      read_rejects: answerOf(RejectsPage),
      send_rows: answerOf(SentRows),
    });
    expect(schema('send_rows')).toMatchObject({
      type: 'object',
      required: ['rows'],
      additionalProperties: false,
      properties: { rows: { type: 'array', minItems: 1, items: { type: 'object' } }, batch_id: { type: 'string', pattern: IDEMPOTENCY_KEY_PATTERN.source } },
    });
  });

  it('describes a sink: the schema the roll checks rows against, the policy, lag, last roll and rejects', async () => {
    const described = await structured(client, 'describe_sink', { sink: 'events_in' });
    expect(described).toMatchObject({
      id: sink.id,
      table: `${namespace}.events`,
      state: 'active',
      roll: { roll_seconds: 300, max_batches: 1000 },
      lag: { batches_waiting: 0, seconds_behind: 0 },
      last_roll: null,
      rejects: { rows_total: 0 },
    });
    expect(described.schema.fields.map(({ name, type, required }: { name: string; type: string; required: boolean }) => ({ name, type, required }))).toEqual([
      { name: 'x', type: 'long', required: true },
      { name: 'who', type: 'string', required: false },
    ]);
    const listed = await structured(client, 'list_sinks', { warehouse: api.warehouse });
    expect(listed.sinks.map((s: { id: string }) => s.id)).toEqual([sink.id]);
  });

  it('sends the same call twice: one batch, the second answered as a replay', async () => {
    const first = await structured(client, 'send_rows', { rows });
    expect(first).toMatchObject({ sink_id: sink.id, accepted: 3, rejected: 0, replayed: 0 });
    expect(first.batches).toHaveLength(1);
    batchId = first.batches[0].batch_id;
    expect(batchId).toMatch(/^[0-9a-f]{24}-1$/);

    const again = await structured(client, 'send_rows', { rows });
    expect(again).toEqual({ ...first, replayed: 1, batches: [{ ...first.batches[0], replay: true }] });

    expect(await structured(client, 'batch_status', { sink: sink.id, batch_id: batchId })).toMatchObject({ state: 'pending', rows: 3 });
    const tail = await structured(client, 'tail_rows', { sink: 'events_in', limit: 10 });
    expect(tail).toMatchObject({ batches_waiting: 1, rows_waiting: 3, truncated: false });
    expect(tail.rows.map((r: { row: unknown }) => r.row)).toEqual(rows);
  });

  it('answers refusals as tool errors with the API\'s code and message', async () => {
    const missing = await refused(call(client, 'describe_sink', { sink: 'nope' }));
    expect(missing.code).toBe('sink_not_found');
    expect(missing.message).toMatch(/nope/);
    // The contract refuses before anything is sent: no rows, a batch id with a slash.
    expect(textOf((await call(client, 'send_rows', { rows: [] })) as ToolAnswer)).toMatch(/Input validation error/);
    expect(textOf((await call(client, 'batch_status', { sink: sink.id, batch_id: '../keys' })) as ToolAnswer)).toMatch(/Input validation error/);
  });
});

const python = path.join(repoRoot, '.venv', 'bin', 'python');
const runPython = promisify(execFile);

/** `tablemere mcp` driven by the Python SDK's client (apps/cli/test/support/mcp_client.py). */
async function pythonClient(args: string[], calls: Array<{ tool: string; arguments: Record<string, unknown> }>) {
  const plan = { command: process.execPath, args: [cliBin, 'mcp', ...args], env: apiEnv(), cwd: outsideDir(), calls };
  const { stdout } = await runPython(python, [path.join(import.meta.dirname, 'support', 'mcp_client.py'), JSON.stringify(plan)], { timeout: 60_000 });
  return JSON.parse(stdout) as { tools: Record<string, unknown>; calls: Array<{ is_error: boolean; text: string; structured: unknown }> };
}

describe('after the roll', () => {
  beforeAll(async () => {
    expect(batchId).toBeDefined();
    expect(await rollOnce(api, sink.id)).toMatchObject({ outcome: 'committed' });
  }, 120_000);

  it('the Python client reads the rejected row with its reason; a send with the admin key alone is refused', async () => {
    const answered = await pythonClient(
      [],
      [
        { tool: 'read_rejects', arguments: { sink: 'events_in' } },
        { tool: 'send_rows', arguments: { rows: [{ x: 9 }] } },
      ],
    );
    expect(Object.keys(answered.tools).sort()).toEqual(toolNames);
    const [rejects, send] = answered.calls;
    expect(rejects!.is_error).toBe(false);
    const page = JSON.parse(rejects!.text);
    // The Python SDK checked the structured copy against the tool's outputSchema on receipt.
    expect(rejects!.structured).toEqual(page);
    expect(page.rejects).toHaveLength(1);
    expect(page.rejects[0]).toMatchObject({ batch_id: batchId, line: 1, reason: 'unknown_field', field: 'mood', row: rows[2] });
    expect(send!.is_error).toBe(true);
    expect(JSON.parse(send!.text).error).toEqual({ code: 'no_send_key', message: expect.stringMatching(/^send_rows needs a send key: .*\(an API key cannot send/) });
  }, 60_000);

  it('PyIceberg and DuckDB read the accepted rows; batch_status says committed', async () => {
    const loaded = await (await stackCatalog()).loadTable({ namespace, name: 'events' });
    const [py, duck] = await Promise.all([pyicebergRows(namespace, 'events', stackEnv(), ['x', 'who']), duckdbRows(loaded.metadataLocation!, stackEnv())]);
    const plain = (found: Array<Record<string, unknown>>) => found.map((r) => ({ x: Number(r.x), who: r.who })).sort((a, b) => a.x - b.x);
    expect(plain(py)).toEqual(rows.slice(0, 2));
    expect(plain(duck)).toEqual(rows.slice(0, 2));

    const client = await connect([]);
    try {
      expect(await structured(client, 'batch_status', { sink: 'events_in', batch_id: batchId })).toMatchObject({ state: 'committed', rows: 3, rejected_rows: 1 });
      expect((await structured(client, 'read_rejects', { sink: sink.id })).rejects).toMatchObject([{ batch_id: batchId, reason: 'unknown_field', row: rows[2] }]);
      expect(await structured(client, 'describe_sink', { sink: sink.id })).toMatchObject({ lag: { batches_waiting: 0 }, last_roll: { rows: 2, rejected_rows: 1 }, rejects: { rows_total: 1 } });
    } finally {
      await client.close();
    }
  }, 60_000);
});

describe('the protocol', () => {
  it('without either key, stops before serving: exit 2, one error line, nothing on stdout', async () => {
    const result = await runCli(['mcp'], { env: {} });
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: 'error: tablemere mcp needs an API key or a send key (--send-key-file FILE or $TABLEMERE_SEND_KEY): no API URL: set TABLEMERE_API_URL or pass --api-url\n',
    });
  });

  it("the MCP inspector's CLI mode lists the tools without errors", async () => {
    // inspector-cli reads its own package.json through a path tested against the working
    // directory: run it from its build directory, where that path exists.
    const inspector = path.dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector-cli/build/cli.js'));
    const env = ['-e', `TABLEMERE_API_URL=${api.url}`, '-e', `TABLEMERE_API_KEY=${api.adminKey}`];
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [path.join(inspector, 'cli.js'), '--cli', ...env, process.execPath, cliBin, 'mcp', '--method', 'tools/list'], {
      cwd: inspector,
      env: baseEnv(),
      timeout: 30_000,
    });
    const listed = JSON.parse(stdout) as { tools: Array<{ name: string; inputSchema: { type: string } }> };
    expect(listed.tools.map((t) => t.name).sort()).toEqual(toolNames);
    for (const tool of listed.tools) expect(tool.inputSchema.type).toBe('object');
    // Its stderr holds its v1 deprecation notice alone.
    expect(stderr).toContain('inspector v1 is deprecated');
    expect(stderr).not.toMatch(/error|fail/i);
  }, 60_000);

  it('stdout carries protocol messages alone; with a send key only, the read tools are refused and the server ends with its input', async () => {
    const child = spawn(process.execPath, [cliBin, 'mcp', '--send-key-file', keyFile], { cwd: outsideDir(), env: baseEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const answered = new Promise<void>((resolve) => {
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
        if (stdout.includes('"id":2')) resolve();
      });
    });
    const send = (message: object) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
    send({ id: 1, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    send({ method: 'notifications/initialized' });
    send({ id: 2, method: 'tools/call', params: { name: 'tail_rows', arguments: { sink: sink.id } } });
    await answered;
    child.stdin.end();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));

    expect(code).toBe(0);
    const messages = stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { jsonrpc: string; id: number; result: ToolAnswer });
    expect(messages.map((m) => [m.jsonrpc, m.id])).toEqual([
      ['2.0', 1],
      ['2.0', 2],
    ]);
    expect(messages[1]!.result.isError).toBe(true);
    expect(JSON.parse(textOf(messages[1]!.result)).error.code).toBe('no_api_key');
    expect(stderr).toContain(`serving over stdio with no API key and the send key of ${sink.id}`);
  }, 30_000);
});
