import { UpdateWarehouseRequest, Warehouse, WAREHOUSE_SETTINGS, WarehouseParams } from '@tablemere/contracts';
import { transaction } from '@tablemere/db';
import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../../deps.ts';
import { updateWarehouse as changeWarehouse } from '../../domain/warehouses.ts';
import { apiError } from '../../errors.ts';
import { principalOf } from '../../http/auth.ts';
import { parse } from '../../http/parse.ts';

/** PATCH /v1/warehouses/{warehouse}: new endpoints or credentials for a registration; audited. */
export function updateWarehouse(app: FastifyInstance, deps: RouteDeps): void {
  app.patch('/v1/warehouses/:warehouse', {
    config: {
      openapi: {
        id: 'updateWarehouse', tag: 'warehouses', summary: "Change a warehouse's endpoints or credentials",
        description:
          'For a catalog or store that moved, or a rotated secret: `auth` is replaced whole, `s3` field by field (the two keys together); the name and `s3.sink_bucket` stay. ' +
          'Rollers use the change from their next tick, other API processes within 60 s. Audited as `warehouse.update` (secrets as "replaced").',
        params: WarehouseParams,
        body: { schema: UpdateWarehouseRequest },
        answers: { 200: { description: 'The warehouse as it is now', schema: Warehouse } },
        errors: ['warehouse_not_found', 'nothing_to_update'],
      },
    },
  }, async (request): Promise<Warehouse> => {
    const { warehouse } = parse(WarehouseParams, request.params, 'params');
    const body = parse(UpdateWarehouseRequest, request.body, 'body');
    const s3 = body.s3 ?? {};
    if (body.rest_uri === undefined && body.warehouse === undefined && body.auth === undefined && Object.values(s3).every((v) => v === undefined)) {
      throw apiError('nothing_to_update', { details: { settings: [...WAREHOUSE_SETTINGS] } });
    }
    const principal = principalOf(request);
    return transaction(deps.pool, (client) => changeWarehouse(client, deps.secrets, principal.projectId, warehouse, body, principal.keyId));
  });
}
