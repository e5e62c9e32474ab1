import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../../deps.ts';
import { apiKeyScope } from '../../http/auth.ts';
import { createWarehouse } from './create.ts';
import { getWarehouse } from './get.ts';
import { listWarehouses } from './list.ts';
import { measureStorage } from './measure.ts';
import { updateWarehouse } from './update.ts';

export function warehouseRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.register(apiKeyScope(deps.pool, 'read', (read) => listWarehouses(read, deps)));
  app.register(apiKeyScope(deps.pool, 'read', (read) => getWarehouse(read, deps)));
  app.register(apiKeyScope(deps.pool, 'admin', (admin) => createWarehouse(admin, deps)));
  app.register(apiKeyScope(deps.pool, 'admin', (admin) => updateWarehouse(admin, deps)));
  app.register(apiKeyScope(deps.pool, 'write', (write) => measureStorage(write, deps)));
}
