import { CreateSinkRequest, CreatedSink } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import { createSink as createSinkRow } from '../../domain/sinks.ts';
import { principalOf } from '../../http/auth.ts';
import { parse } from '../../http/parse.ts';
import type { SinkRouteDeps } from './context.ts';

/** POST /v1/sinks: a sink for an existing table; 201 with the send key, shown this once. */
export function createSink(app: FastifyInstance, deps: SinkRouteDeps): void {
  app.post('/v1/sinks', {
    config: {
      openapi: {
        id: 'createSink', tag: 'sinks', summary: "Create a sink: a table's HTTP intake",
        description: 'Loads the table through the warehouse\'s catalog and commits nothing to it. The answer holds the send key, shown this once. A roll happens after `roll_seconds`, at `roll_bytes`, at 1,000 pending batches, or after `inactivity_seconds` of quiet. A `partition` (e.g. `["day(__ingest_ts)"]`) becomes the table\'s partition spec at the first roll, in the commit that adds `__ingest_ts`; a table already partitioned keeps its spec.',
        body: { schema: CreateSinkRequest, examples: { events: { summary: 'A sink for garden.events', value: { name: 'events_in', table: 'garden.events', warehouse: 'garden', inactivity_seconds: 10 } } } },
        answers: { 201: { description: 'The sink with its send key', schema: CreatedSink } },
        errors: ['warehouse_not_found', 'table_not_found', 'sink_exists', 'partition_invalid', 'partition_field_unknown', 'partition_transform_invalid', 'partition_conflict', 'table_format_unsupported', 'catalog_error', 'catalog_unavailable'],
      },
    },
  }, async (request, reply): Promise<CreatedSink> => {
    const body = parse(CreateSinkRequest, request.body, 'body');
    const created = await createSinkRow(deps, principalOf(request), body);
    void reply.status(201);
    return created;
  });
}
