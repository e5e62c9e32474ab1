import type { Readable, Writable } from 'node:stream';
import {
  BatchParams,
  BatchStatus,
  BatchId,
  CreatedTable,
  PendingQuery,
  PendingRows,
  RejectsPage,
  RejectsQuery,
  SEND_BODY_LIMIT_TEXT,
  SendBatch,
  Sink,
  SinkList,
  SinkListQuery,
  SinkParams,
} from '@tablemere/contracts';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import cliPackage from '../../package.json' with { type: 'json' };
import type { ApiClient } from '../api-client.ts';
import { sinkSegment } from '../context.ts';
import { CliError } from '../errors.ts';
import type { SendTarget } from '../send-client.ts';
import { SentRows, sendRows } from './send-rows.ts';
import { answer, detailOf, refusal } from './tool-results.ts';

/**
 * What the tools may use, fixed at start: the API with the API key (the read tools) and the
 * send key with its one route (send_rows). A missing key is kept as the refusal its tools give.
 */
export interface McpSetup {
  readonly api: ApiClient | CliError;
  readonly send: SendTarget | CliError;
  /** Remarks for the operator: stderr, never stdout (stdout carries the protocol alone). */
  note(line: string): void;
}

/**
 * One JSON-RPC message (a line) may be this large: a send_rows call above 16 MiB is split into
 * batches like `sink send`'s, so it has to fit. The SDK's default is 10 MiB.
 */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** What the host shows the model about the server as a whole. */
const INSTRUCTIONS =
  'tablemere sinks: each sink is the HTTP intake of one Apache Iceberg table. send_rows stores rows at once; the next roll appends them to the table ' +
  '(describe_sink shows the schema, the roll policy and what waits) and sets aside the rows that do not fit the schema, which read_rejects lists with their reasons. ' +
  'Calling send_rows again with the same rows never stores them twice.';

const readOnly = { readOnlyHint: true, openWorldHint: false } as const;

/** describe_sink's answer: the sink, and its table's schema (null when the table is gone). */
export const DescribedSink = Sink.extend({ schema: CreatedTable.shape.schema.nullable() });
export type DescribedSink = z.infer<typeof DescribedSink>;

/** The tools, each input and output schema the zod contract of the route it calls. */
function buildMcpServer(setup: McpSetup): McpServer {
  const server = new McpServer({ name: 'tablemere', version: cliPackage.version }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  const tool = <A>(name: string, run: (args: A) => Promise<unknown>) => async (args: A): Promise<CallToolResult> => {
    try {
      return answer(await run(args));
    } catch (error) {
      const { code, message } = detailOf(error);
      setup.note(`${name}: refused: ${code}: ${message}`);
      return refusal(error);
    }
  };
  const api = (): ApiClient => {
    if (setup.api instanceof CliError) throw setup.api;
    return setup.api;
  };
  const sinkPath = (sink: string) => `/v1/sinks/${sinkSegment(sink)}`;

  server.registerTool(
    'list_sinks',
    {
      title: 'List sinks',
      description:
        "The project's sinks (an HTTP intake per Iceberg table), each with its table, roll policy, what waits (lag), the last roll and the rejects summary. " +
        'Optional: warehouse (a warehouse name, as `tablemere warehouse list` shows them), include_deleted and stalled ("true" for deleted sinks too, or only sinks whose rolls fail).',
      inputSchema: SinkListQuery,
      outputSchema: SinkList,
      annotations: readOnly,
    },
    tool('list_sinks', async (query: z.output<typeof SinkListQuery>) => {
      const flag = (on: boolean) => (on ? 'true' : undefined);
      const answered = await api().get('/v1/sinks', SinkList, { warehouse: query.warehouse, include_deleted: flag(query.include_deleted), stalled: flag(query.stalled) });
      return answered.body;
    }),
  );

  server.registerTool(
    'describe_sink',
    {
      title: 'Describe a sink',
      description:
        'One sink: its table and `schema` (the table\'s current schema, which the roll checks every row against: each field of its type, required fields present, no field the table lacks; `__ingest_ts`, when present, is set by the roll: never send it), ' +
        'the roll policy, lag (what waits), the last roll, the rejects summary and, while rolls fail, `roll_error`. sink: its id (snk_...) or name.',
      inputSchema: SinkParams,
      outputSchema: DescribedSink,
      annotations: readOnly,
    },
    tool('describe_sink', async ({ sink }: z.output<typeof SinkParams>) => {
      const found = await api().get(sinkPath(sink), Sink);
      return { ...(found.body as object), schema: await tableSchema(api(), found.value) };
    }),
  );

  server.registerTool(
    'batch_status',
    {
      title: 'Batch status',
      description: 'Whether a batch (by the batch_id send_rows answered) is pending, committed (with its snapshot id), rejected, discarded or unknown.',
      inputSchema: BatchParams,
      outputSchema: BatchStatus,
      annotations: readOnly,
    },
    tool('batch_status', async ({ sink, batch_id }: z.output<typeof BatchParams>) => (await api().get(`${sinkPath(sink)}/batches/${encodeURIComponent(batch_id)}`, BatchStatus)).body),
  );

  server.registerTool(
    'tail_rows',
    {
      title: 'Rows waiting for the roll',
      description: 'The newest rows stored and waiting for the next roll (limit: how many, default 20), oldest of them first, read without consuming anything.',
      inputSchema: SinkParams.extend(PendingQuery.shape),
      outputSchema: PendingRows,
      annotations: readOnly,
    },
    tool('tail_rows', async ({ sink, limit }: z.output<typeof SinkParams> & z.output<typeof PendingQuery>) =>
      (await api().getExact(`${sinkPath(sink)}/pending`, PendingRows, { limit: String(limit) })).body,
    ),
  );

  server.registerTool(
    'read_rejects',
    {
      title: 'Rejected rows',
      description:
        'Rows the rolls rejected, each as it was sent with its reason (e.g. unknown_field, type_mismatch, missing_required, not_an_object), field and message, in pages of up to limit (default 100): pass next_cursor as cursor for the next; since (RFC 3339) keeps rejects written at or after it. ' +
        'Fix the rows and send them again with send_rows.',
      inputSchema: SinkParams.extend(RejectsQuery.shape),
      outputSchema: RejectsPage,
      annotations: readOnly,
    },
    tool('read_rejects', async ({ sink, since, limit, cursor }: z.output<typeof SinkParams> & z.output<typeof RejectsQuery>) =>
      (await api().getExact(`${sinkPath(sink)}/rejects`, RejectsPage, { since, limit: String(limit), cursor })).body,
    ),
  );

  server.registerTool(
    'send_rows',
    {
      title: 'Send rows',
      description:
        'Sends JSON object rows to the sink the configured send key belongs to; they reach the table at its next roll, which checks them against the schema describe_sink shows. ' +
        'Calling again with the same rows (and batch_id) never stores them twice: each batch is named by its content, or by batch_id when given (give a new batch_id to send equal rows again on purpose). ' +
        `More than ${SEND_BODY_LIMIT_TEXT} is split into several batches. Answers each batch_id, what was accepted and rejected at intake, and whether it was a replay of an earlier call.`,
      inputSchema: z.strictObject({
        rows: SendBatch.describe('the rows: JSON objects, one per table row'),
        batch_id: BatchId.optional().describe('an Idempotency-Key of your own for this call; further batches of a large call are <batch_id>-2, -3, ...'),
      }),
      outputSchema: SentRows,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    tool('send_rows', async (input: { rows: Record<string, unknown>[]; batch_id?: string | undefined }) => {
      if (setup.send instanceof CliError) throw setup.send;
      return sendRows(setup.send, input, { note: setup.note });
    }),
  );
  return server;
}

/** The sink's table schema, or null when the table is gone (the sink is then table_missing). */
async function tableSchema(api: ApiClient, sink: Sink): Promise<DescribedSink['schema']> {
  try {
    return (await api.get(`/v1/warehouses/${encodeURIComponent(sink.warehouse)}/tables/${encodeURIComponent(sink.table)}`, CreatedTable)).value.schema;
  } catch (error) {
    if (error instanceof CliError && error.detail?.code === 'table_not_found') return null;
    throw error;
  }
}

/** Serves the tools over these streams until the input ends or the host closes the connection. */
export async function serveMcp(setup: McpSetup, input: Readable, output: Writable): Promise<void> {
  const server = buildMcpServer(setup);
  const transport = new StdioServerTransport(input, output, { maxBufferSize: MAX_MESSAGE_BYTES });
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = resolve;
  });
  transport.onerror = (error) => setup.note(`mcp: ${error.message}`);
  input.once('end', () => void server.close());
  await server.connect(transport);
  await closed;
}
