import { InternalSinkParams, RollReport, RollReportResult } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import type { InternalRouteDeps } from '../../deps.ts';
import { reportRoll as record } from '../../domain/rolls/report.ts';
import { parse } from '../../http/parse.ts';

/** POST /internal/sinks/{id}/roll: the roller's report of one roll (idempotent). */
export function reportRoll(app: FastifyInstance, deps: InternalRouteDeps): void {
  app.post('/internal/sinks/:id/roll', {
    config: {
      openapi: {
        id: 'reportRoll', tag: 'roller', summary: 'Report one roll (idempotent)',
        params: InternalSinkParams,
        body: { schema: RollReport },
        answers: { 200: { description: 'Recorded, or the first result again (`replayed: true`)', schema: RollReportResult } },
        errors: ['sink_not_found', 'lease_lost', 'roll_not_found', 'roll_conflict'],
      },
    },
  }, async (request): Promise<RollReportResult> => {
    const { id } = parse(InternalSinkParams, request.params, 'params');
    return record(deps.pool, id, parse(RollReport, request.body, 'body'));
  });
}
