import { Warehouse, WarehouseParams } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../../deps.ts';
import { getWarehouse as findWarehouse } from '../../domain/warehouses.ts';
import { principalOf } from '../../http/auth.ts';
import { parse } from '../../http/parse.ts';

/** GET /v1/warehouses/{warehouse}: one of the project's warehouses, auth type only. */
export function getWarehouse(app: FastifyInstance, deps: RouteDeps): void {
  app.get('/v1/warehouses/:warehouse', {
    config: {
      openapi: {
        id: 'getWarehouse', tag: 'warehouses', summary: 'One warehouse',
        description: 'A catalog registration by name, with the auth type only: secrets are never shown.',
        params: WarehouseParams,
        answers: { 200: { description: 'The warehouse', schema: Warehouse } },
        errors: ['warehouse_not_found'],
      },
    },
  }, async (request): Promise<Warehouse> => {
    const { warehouse } = parse(WarehouseParams, request.params, 'params');
    return findWarehouse(deps.pool, principalOf(request).projectId, warehouse);
  });
}
