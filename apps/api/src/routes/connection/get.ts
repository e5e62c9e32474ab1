import { ConnectionQuery, Connection } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../../deps.ts';
import { intakePlacement } from '../../domain/intake/stores.ts';
import { rejectsRecipe } from '../../domain/sinks/rejects-recipe.ts';
import { openDefaultWarehouse, openWarehouse } from '../../domain/warehouses.ts';
import { principalOf } from '../../http/auth.ts';
import { parse } from '../../http/parse.ts';

/** Said by /v1/connection while sinks are on. */
export const SINKS_NOTE =
  'Producers without a query engine can append JSON rows to a table through a sink: create one with ' +
  '`tablemere sink create` (POST /v1/sinks), then POST JSON arrays to ingest_url with the sink id, ' +
  'its send key as the bearer token and an Idempotency-Key per batch; rows land in the table within its roll policy.';

/**
 * GET /v1/connection[?warehouse=NAME]: what an engine needs to reach a warehouse (the
 * project's first one by default): catalog URI, warehouse, prefix, auth type, S3 endpoint;
 * and, while sinks are on, the send route's URL and a note on using it.
 */
export function getConnection(app: FastifyInstance, deps: RouteDeps): void {
  app.get('/v1/connection', {
    config: {
      openapi: {
        id: 'getConnection', tag: 'connection', summary: 'What an engine needs to reach a warehouse',
        description: "Catalog URI, warehouse, prefix, auth type, S3 endpoint; while sinks are on, the send route's URL (`ingest_url`, `{sink_id}` to fill in), a note on it, and the read recipe of the sinks' rejects files.",
        query: ConnectionQuery,
        paramDescriptions: { warehouse: "The warehouse's name; the project's first one when absent" },
        answers: { 200: { description: 'The connection', schema: Connection } },
        errors: ['warehouse_not_found', 'catalog_error', 'catalog_unavailable'],
      },
    },
  }, async (request): Promise<Connection> => {
    const query = parse(ConnectionQuery, request.query, 'query');
    const { projectId } = principalOf(request);
    const warehouse = query.warehouse
      ? await openWarehouse(deps.pool, deps.secrets, projectId, query.warehouse)
      : await openDefaultWarehouse(deps.pool, deps.secrets, projectId);
    const catalog = await deps.catalogs.get(warehouse);
    return {
      api_url: deps.publicUrl,
      warehouse: {
        name: warehouse.name,
        rest_uri: warehouse.restUri,
        warehouse: warehouse.warehouse,
        prefix: catalog.prefix ?? null,
        auth: { type: warehouse.auth.type },
        s3: { endpoint: warehouse.s3.endpoint, region: warehouse.s3.region, path_style: true },
      },
      ...(deps.sinksEnabled
        ? {
            sinks_note: SINKS_NOTE,
            ingest_url: `${deps.publicUrl}/v1/sinks/{sink_id}`,
            sink_rejects: rejectsRecipe(warehouse, intakePlacement(warehouse, deps.intakeBucket)),
          }
        : {}),
    };
  });
}
