import { InternalSinkParams, UpkeepReport, type UpkeepReportResult } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import type { InternalRouteDeps } from '../../deps.ts';
import { reportUpkeep as record } from '../../domain/upkeep-report.ts';
import { parse } from '../../http/parse.ts';

/** POST /internal/sinks/{id}/upkeep: the roller's report of one upkeep of the sink's table (idempotent). */
export function reportUpkeep(app: FastifyInstance, deps: InternalRouteDeps): void {
  app.post('/internal/sinks/:id/upkeep', async (request): Promise<UpkeepReportResult> => {
    const { id } = parse(InternalSinkParams, request.params, 'params');
    return record(deps.pool, id, parse(UpkeepReport, request.body, 'body'));
  });
}
