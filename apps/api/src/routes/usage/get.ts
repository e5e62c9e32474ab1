import { UsageQuery, Usage } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../../deps.ts';
import { projectUsage } from '../../domain/usage.ts';
import { principalOf } from '../../http/auth.ts';
import { parse } from '../../http/parse.ts';

/** GET /v1/usage: the key's project's ingest this month and its measured storage. */
export function getUsage(app: FastifyInstance, deps: RouteDeps): void {
  app.get('/v1/usage', {
    config: {
      openapi: {
        id: 'getUsage', tag: 'usage', summary: "The project's ingest this month and its measured storage",
        description: 'The calendar month in UTC; storage leaves out pending intake (`_sink/`).',
        query: UsageQuery,
        answers: { 200: { description: 'Usage', schema: Usage } },
        errors: [],
      },
    },
  }, async (request): Promise<Usage> => {
    parse(UsageQuery, request.query, 'query');
    return projectUsage(deps.pool, principalOf(request).projectId);
  });
}
