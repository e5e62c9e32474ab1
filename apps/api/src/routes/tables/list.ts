import { TableListQuery, WarehouseParams, TableList } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../../deps.ts';
import { listTables as listCatalogTables } from '../../domain/tables.ts';
import { openWarehouse } from '../../domain/warehouses.ts';
import { principalOf } from '../../http/auth.ts';
import { parse } from '../../http/parse.ts';

/** GET /v1/warehouses/{warehouse}/tables[?namespace=N]: the catalog's tables. */
export function listTables(app: FastifyInstance, deps: RouteDeps): void {
  app.get('/v1/warehouses/:warehouse/tables', {
    config: {
      openapi: {
        id: 'listTables', tag: 'tables', summary: "The catalog's tables",
        params: WarehouseParams,
        paramDescriptions: { warehouse: "The warehouse's name", namespace: 'Only this namespace' },
        query: TableListQuery,
        answers: { 200: { description: 'Tables', schema: TableList } },
        errors: ['warehouse_not_found', 'catalog_error', 'catalog_unavailable'],
      },
    },
  }, async (request): Promise<TableList> => {
    const params = parse(WarehouseParams, request.params, 'params');
    const query = parse(TableListQuery, request.query, 'query');
    const warehouse = await openWarehouse(deps.pool, deps.secrets, principalOf(request).projectId, params.warehouse);
    return { tables: await listCatalogTables(await deps.catalogs.get(warehouse), query.namespace) };
  });
}
