import { CreateWarehouseRequest, Warehouse } from '@tablemere/contracts';
import { transaction } from '@tablemere/db';
import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../../deps.ts';
import { createWarehouse as registerWarehouse, settingsFromRequest } from '../../domain/warehouses.ts';
import { principalOf } from '../../http/auth.ts';
import { parse } from '../../http/parse.ts';

/** POST /v1/warehouses: registers a catalog; its secrets are sealed and never shown again. */
export function createWarehouse(app: FastifyInstance, deps: RouteDeps): void {
  app.post('/v1/warehouses', {
    config: {
      openapi: {
        id: 'createWarehouse', tag: 'warehouses', summary: 'Register an Iceberg REST catalog',
        description: 'Its secrets are sealed and never returned. `s3.sink_bucket`: an ordinary bucket where its sinks keep their batches, written as the warehouse\'s own identity.',
        body: { schema: CreateWarehouseRequest },
        answers: { 201: { description: 'The warehouse', schema: Warehouse } },
        errors: ['warehouse_exists'],
      },
    },
  }, async (request, reply): Promise<Warehouse> => {
    const body = parse(CreateWarehouseRequest, request.body, 'body');
    const principal = principalOf(request);
    const settings = settingsFromRequest(body);
    const warehouse = await transaction(deps.pool, (client) => registerWarehouse(client, deps.secrets, principal.projectId, settings, principal.keyId));
    void reply.status(201);
    return warehouse;
  });
}
