import { TableParams, CreatedTable } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../../deps.ts';
import { getTable as describeCatalogTable } from '../../domain/tables.ts';
import { openWarehouse } from '../../domain/warehouses.ts';
import { principalOf } from '../../http/auth.ts';
import { parse } from '../../http/parse.ts';

/** GET /v1/warehouses/{warehouse}/tables/{namespace}.{name}: one table's schema and location. */
export function getTable(app: FastifyInstance, deps: RouteDeps): void {
  app.get('/v1/warehouses/:warehouse/tables/:table', {
    config: {
      openapi: {
        id: 'getTable', tag: 'tables', summary: "One table's schema and location",
        params: TableParams,
        paramDescriptions: { warehouse: "The warehouse's name", table: '`<namespace>.<name>`' },
        answers: { 200: { description: 'The table', schema: CreatedTable } },
        errors: ['warehouse_not_found', 'table_not_found', 'catalog_error', 'catalog_unavailable'],
      },
    },
  }, async (request): Promise<CreatedTable> => {
    const params = parse(TableParams, request.params, 'params');
    const warehouse = await openWarehouse(deps.pool, deps.secrets, principalOf(request).projectId, params.warehouse);
    return describeCatalogTable(await deps.catalogs.get(warehouse), warehouse.name, params.table.namespace, params.table.name);
  });
}
