import { InternalSinkParams, UpkeepReport, UpkeepReportResult } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import type { InternalRouteDeps } from '../../deps.ts';
import { reportUpkeep as record } from '../../domain/rolls/upkeep-report.ts';
import { parse } from '../../http/parse.ts';

/** POST /internal/sinks/{id}/upkeep: the roller's report of one upkeep of the sink's table (idempotent). */
export function reportUpkeep(app: FastifyInstance, deps: InternalRouteDeps): void {
  app.post('/internal/sinks/:id/upkeep', {
    config: {
      openapi: {
        id: 'reportUpkeep', tag: 'roller', summary: "Report one upkeep of the sink's table (idempotent)",
        params: InternalSinkParams,
        body: {
          schema: UpkeepReport,
          examples: {
            nothing: {
              summary: 'An upkeep that found nothing to do',
              value: {
                lease_id: '0f5c2f4e-8a51-4c1e-9d07-2b8e3a6c1d90', started_at: '2026-09-21T12:00:00.123456Z', seconds: 0.4, outcome: 'nothing', snapshot_ids: [],
                files: { data_before: 3, data_after: 3, manifests_before: 1, manifests_after: 1 }, rewritten: { files: 0, bytes: 0, rows: 0 },
                expired_snapshots: 0, deleted_files: { data: 0, manifests: 0, manifest_lists: 0 }, snapshots_kept: 4,
              },
            },
          },
        },
        answers: { 200: { description: 'Recorded, or the first result again (`replayed: true`)', schema: UpkeepReportResult } },
        errors: ['sink_not_found', 'lease_lost', 'upkeep_conflict'],
      },
    },
  }, async (request): Promise<UpkeepReportResult> => {
    const { id } = parse(InternalSinkParams, request.params, 'params');
    return record(deps.pool, id, parse(UpkeepReport, request.body, 'body'));
  });
}
