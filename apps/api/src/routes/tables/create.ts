import { CreateTableRequest, WarehouseParams, CreatedTable } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../../deps.ts';
import { recordAudit } from '../../domain/audit.ts';
import { createTable as createCatalogTable } from '../../domain/tables.ts';
import { openWarehouse } from '../../domain/warehouses.ts';
import { principalOf } from '../../http/auth.ts';
import { parse } from '../../http/parse.ts';

/** POST /v1/warehouses/{warehouse}/tables: creates an unpartitioned v2 table (and its namespace). */
export function createTable(app: FastifyInstance, deps: RouteDeps): void {
  app.post('/v1/warehouses/:warehouse/tables', {
    config: {
      openapi: {
        id: 'createTable', tag: 'tables', summary: 'Create an unpartitioned table',
        description: "Format v2, through the warehouse's catalog; the namespace is created when missing. The catalog may renumber field ids: the answer shows the schema it kept.",
        params: WarehouseParams,
        paramDescriptions: { warehouse: "The warehouse's name" },
        body: {
          schema: CreateTableRequest,
          examples: {
            events: {
              summary: 'garden.events with a required long and a string',
              value: { namespace: 'garden', name: 'events', columns: [{ name: 'x', type: 'long', required: true }, { name: 'who', type: 'string' }] },
            },
          },
        },
        answers: { 201: { description: 'The table', schema: CreatedTable } },
        errors: ['warehouse_not_found', 'table_exists', 'catalog_error', 'catalog_unavailable'],
      },
    },
  }, async (request, reply): Promise<CreatedTable> => {
    const params = parse(WarehouseParams, request.params, 'params');
    const body = parse(CreateTableRequest, request.body, 'body');
    const principal = principalOf(request);
    const warehouse = await openWarehouse(deps.pool, deps.secrets, principal.projectId, params.warehouse);
    const created = await createCatalogTable(await deps.catalogs.get(warehouse), warehouse.name, body);
    await recordAudit(deps.pool, {
      projectId: principal.projectId,
      actorKeyId: principal.keyId,
      event: 'table.create',
      subject: `${warehouse.name}/${created.table}`,
      details: { columns: body.columns.length },
    });
    void reply.status(201);
    return created;
  });
}
