import { CreateSinkRequest, CreatedSink } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import { createSink as createSinkRow } from '../../domain/sinks.ts';
import { principalOf } from '../../http/auth.ts';
import { parse } from '../../http/parse.ts';
import type { SinkRouteDeps } from './context.ts';

/** POST /v1/sinks: a sink for an existing unpartitioned table; 201 with the send key, shown this once. */
export function createSink(app: FastifyInstance, deps: SinkRouteDeps): void {
  app.post('/v1/sinks', {
    config: {
      openapi: {
        id: 'createSink', tag: 'sinks', summary: "Create a sink: an unpartitioned table's HTTP intake",
        description: 'Loads the table through the warehouse\'s catalog and commits nothing to it. The answer holds the send key, shown this once. A roll happens after `roll_seconds`, at `roll_bytes`, at 1,000 pending batches, or after `inactivity_seconds` of quiet. `unknown_fields` says what a roll does with a row field the table lacks: `reject` (default) files the row as an `unknown_field` reject; `add_columns` adds the field (top level or nested) as an optional column typed from the rows, in one schema commit before the append.',
        body: { schema: CreateSinkRequest, examples: { events: { summary: 'A sink for garden.events', value: { name: 'events_in', table: 'garden.events', warehouse: 'garden', inactivity_seconds: 10 } } } },
        answers: { 201: { description: 'The sink with its send key', schema: CreatedSink } },
        errors: ['warehouse_not_found', 'table_not_found', 'sink_exists', 'partitioned_table_unsupported', 'table_format_unsupported', 'catalog_error', 'catalog_unavailable'],
      },
    },
  }, async (request, reply): Promise<CreatedSink> => {
    const body = parse(CreateSinkRequest, request.body, 'body');
    const created = await createSinkRow(deps, principalOf(request), body);
    void reply.status(201);
    return created;
  });
}
