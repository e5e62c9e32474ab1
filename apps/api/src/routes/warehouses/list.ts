import { WarehouseList } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../../deps.ts';
import { listWarehouses as listProjectWarehouses } from '../../domain/warehouses.ts';
import { principalOf } from '../../http/auth.ts';

/** GET /v1/warehouses: the project's warehouses, auth type only. */
export function listWarehouses(app: FastifyInstance, deps: RouteDeps): void {
  app.get('/v1/warehouses', {
    config: {
      openapi: {
        id: 'listWarehouses', tag: 'warehouses', summary: "The project's warehouses",
        description: 'Catalog registrations, with the auth type only: secrets are never shown.',
        answers: { 200: { description: 'Warehouses', schema: WarehouseList } },
        errors: [],
      },
    },
  }, async (request): Promise<WarehouseList> => ({
    warehouses: await listProjectWarehouses(deps.pool, principalOf(request).projectId),
  }));
}
