import { CreateSinkRequest, CreatedSink, INFER_SAMPLE_MAX_ROWS, ROLL_MAX_BATCHES } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import { createSinkWithTable } from '../../domain/sinks/table.ts';
import { createSink as createSinkRow } from '../../domain/sinks/create.ts';
import { principalOf } from '../../http/auth.ts';
import { parse } from '../../http/parse.ts';
import type { SinkRouteDeps } from './context.ts';
import { BATCH_IDS_TEXT } from './send.ts';

/** POST /v1/sinks: a sink for an existing table, or for one it creates; 201 with the send key, shown this once. */
export function createSink(app: FastifyInstance, deps: SinkRouteDeps): void {
  app.post('/v1/sinks', {
    config: {
      openapi: {
        id: 'createSink', tag: 'sinks', summary: "Create a sink: a table's HTTP intake",
        description: [
          `Loads the table through the warehouse's catalog and commits nothing to it. The answer holds the send key, shown this once. A roll happens after \`roll_seconds\`, at \`roll_bytes\`, at ${ROLL_MAX_BATCHES} pending batches, or after \`inactivity_seconds\` of quiet. A \`partition\` (e.g. \`["day(__ingest_ts)"]\`) becomes the table's partition spec at the first roll, in the commit that adds \`__ingest_ts\`; a table already partitioned keeps its spec (a \`partition\` given beside it must name the same fields, else 409 \`partition_conflict\`).`,
          '`unknown_fields` says what a roll does with a row field the table lacks: `reject` (default) files the row as an `unknown_field` reject; `add_columns` adds the field (top level or nested) as an optional column typed from the rows by the inference rules below, in one schema commit before the append.',
          `${BATCH_IDS_TEXT} (The send route's docs say how a body names its batch.)`,
          `With \`create_table\` the table is created first (409 \`table_exists\` if it exists), as the table create route does: with \`columns\` as that route takes them, or with columns inferred from \`infer_from\`, up to ${INFER_SAMPLE_MAX_ROWS} sample rows that are used for inference only and never sent to the table. Inference: integers → long, other numbers → double (integers beyond 2^53 mixed with fractions are refused), RFC 3339 date-times with a zone → timestamptz (other strings in the field make it string), other strings → string, booleans → boolean, objects → struct, arrays → list; every column optional. A field holding different kinds, only nulls, only empty arrays or objects, or a name a column cannot take is refused with 400 \`schema_not_inferred\`, naming each in \`fields\`. When the sink then cannot be created, the table is dropped again if it is still empty and still the one created; the error's \`created_table\` says whether it was (\`dropped\`) or why not (\`left\`). The answer then carries \`created_table\`.`,
        ].join('\n\n'),
        body: {
          schema: CreateSinkRequest,
          examples: {
            events: { summary: 'A sink for garden.events', value: { name: 'events_in', table: 'garden.events', warehouse: 'garden', inactivity_seconds: 10 } },
            inferred: {
              summary: 'A sink and its table, with columns inferred from sample rows',
              value: { name: 'readings_in', table: 'garden.readings', warehouse: 'garden', create_table: { infer_from: [{ device: 'a1', temp_c: 21.5, at: '2026-12-02T11:30:00Z', tags: ['east'] }] } },
            },
          },
        },
        answers: { 201: { description: 'The sink with its send key', schema: CreatedSink } },
        errors: ['schema_not_inferred', 'warehouse_not_found', 'table_not_found', 'table_exists', 'sink_exists', 'partition_invalid', 'partition_field_unknown', 'partition_transform_invalid', 'partition_conflict', 'table_format_unsupported', 'catalog_error', 'catalog_unavailable'],
      },
    },
  }, async (request, reply): Promise<CreatedSink> => {
    const body = parse(CreateSinkRequest, request.body, 'body');
    const created = body.create_table
      ? await createSinkWithTable(deps, principalOf(request), { ...body, create_table: body.create_table }, request.id)
      : await createSinkRow(deps, principalOf(request), body);
    void reply.status(201);
    return created;
  });
}
