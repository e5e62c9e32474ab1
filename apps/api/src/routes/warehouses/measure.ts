import { MeasureParams, StorageMeasurement } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../../deps.ts';
import { measureWarehouse } from '../../domain/meter.ts';
import { openWarehouse, openWarehouses } from '../../domain/warehouses.ts';
import { principalOf } from '../../http/auth.ts';
import { parse } from '../../http/parse.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * POST /v1/warehouses/{warehouse}/measure (name or id): lists the warehouse's bucket with its
 * own S3 credentials, skipping the intake (`_sink/`), records and answers the figure.
 */
export function measureStorage(app: FastifyInstance, deps: RouteDeps): void {
  app.post('/v1/warehouses/:warehouse/measure', {
    config: {
      openapi: {
        id: 'measureWarehouse', tag: 'warehouses', summary: "Measure a warehouse's storage now",
        description: "Lists the warehouse's bucket with its own S3 credentials, leaving out the sinks' `_sink/` prefix, and records the figure.",
        params: MeasureParams,
        paramDescriptions: { warehouse: "The warehouse's name or id" },
        answers: { 200: { description: 'The measurement', schema: StorageMeasurement } },
        errors: ['warehouse_not_found', 'warehouse_not_measurable', 'measure_failed'],
      },
    },
  }, async (request): Promise<StorageMeasurement> => {
    const { warehouse: ref } = parse(MeasureParams, request.params, 'params');
    const { projectId } = principalOf(request);
    const byId = UUID.test(ref) ? (await openWarehouses(deps.pool, deps.secrets, [ref])).find((w) => w.projectId === projectId) : undefined;
    // Not an id of this project: a name, or 404 warehouse_not_found.
    const warehouse = byId ?? (await openWarehouse(deps.pool, deps.secrets, projectId, ref));
    return measureWarehouse(deps.pool, warehouse, 'request');
  });
}
