import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../../deps.ts';
import { apiKeyScope } from '../../http/auth.ts';
import { createKey } from './create.ts';
import { listKeys } from './list.ts';
import { revokeKey } from './revoke.ts';

export function keyRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.register(
    apiKeyScope(deps.pool, 'admin', (admin) => {
      createKey(admin, deps);
      listKeys(admin, deps);
      revokeKey(admin, deps);
    }),
  );
}
