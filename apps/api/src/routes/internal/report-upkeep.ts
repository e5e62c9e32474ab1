import { InternalSinkParams, UpkeepReport, UpkeepReportResult } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import type { InternalRouteDeps } from '../../deps.ts';
import { reportUpkeep as record } from '../../domain/upkeep-report.ts';
import { parse } from '../../http/parse.ts';

/** POST /internal/sinks/{id}/upkeep: the roller's report of one upkeep of the sink's table (idempotent). */
export function reportUpkeep(app: FastifyInstance, deps: InternalRouteDeps): void {
  app.post('/internal/sinks/:id/upkeep', {
    config: {
      openapi: {
        id: 'reportUpkeep', tag: 'roller', summary: "Report one upkeep of the sink's table (idempotent)",
        params: InternalSinkParams,
        body: { schema: UpkeepReport },
        answers: { 200: { description: 'Recorded, or the first result again (`replayed: true`)', schema: UpkeepReportResult } },
        errors: ['sink_not_found', 'lease_lost', 'upkeep_conflict'],
      },
    },
  }, async (request): Promise<UpkeepReportResult> => {
    const { id } = parse(InternalSinkParams, request.params, 'params');
    return record(deps.pool, id, parse(UpkeepReport, request.body, 'body'));
  });
}
