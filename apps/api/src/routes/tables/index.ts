import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../../deps.ts';
import { apiKeyScope } from '../../http/auth.ts';
import { createTable } from './create.ts';
import { getTable } from './get.ts';
import { listTables } from './list.ts';

export function tableRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.register(
    apiKeyScope(deps.pool, 'read', (read) => {
      listTables(read, deps);
      getTable(read, deps);
    }),
  );
  app.register(apiKeyScope(deps.pool, 'write', (write) => createTable(write, deps)));
}
