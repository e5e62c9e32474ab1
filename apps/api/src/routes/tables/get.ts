import { TableParams, type CreatedTable } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../../deps.ts';
import { getTable as describeCatalogTable } from '../../domain/tables.ts';
import { openWarehouse } from '../../domain/warehouses.ts';
import { principalOf } from '../../http/auth.ts';
import { parse } from '../../http/parse.ts';

/** GET /v1/warehouses/{warehouse}/tables/{namespace}.{name}: one table's schema and location. */
export function getTable(app: FastifyInstance, deps: RouteDeps): void {
  app.get('/v1/warehouses/:warehouse/tables/:table', async (request): Promise<CreatedTable> => {
    const params = parse(TableParams, request.params, 'params');
    const warehouse = await openWarehouse(deps.pool, deps.secrets, principalOf(request).projectId, params.warehouse);
    return describeCatalogTable(await deps.catalogs.get(warehouse), warehouse.name, params.table.namespace, params.table.name);
  });
}
