import { InternalSinksQuery, InternalSinkList } from '@tablemere/contracts';
import { query } from '@tablemere/db';
import type { FastifyInstance } from 'fastify';
import type { InternalRouteDeps } from '../../deps.ts';
import { rollerView } from '../../domain/rolls/due.ts';
import { parse } from '../../http/parse.ts';

/**
 * GET /internal/sinks[?due=true][&sink=ID][&limit=N]: the live sinks as the roller needs them, with
 * each warehouse's access in clear. With sinks disabled: `{enabled: false, sinks: []}`.
 */
export function listSinks(app: FastifyInstance, deps: InternalRouteDeps): void {
  app.get('/internal/sinks', {
    config: {
      openapi: {
        id: 'internalListSinks', tag: 'roller', summary: 'The live sinks as the roller needs them, warehouse access in clear',
        description:
          '`due=true`: only sinks due for a roll, most overdue first, each with the policy rules that hold (`due_reasons`). ' +
          '`sink`: only that sink (none when it is unknown or deleted); with `due=true`, whether it is due now. With sinks disabled: `enabled: false` and no sinks.',
        query: InternalSinksQuery,
        answers: { 200: { description: 'Sinks', schema: InternalSinkList } },
        errors: [],
      },
    },
  }, async (request): Promise<InternalSinkList> => {
    const { due, sink, limit } = parse(InternalSinksQuery, request.query, 'query');
    if (!deps.sinksEnabled) {
      const [row] = await query<{ now: Date }>(deps.pool, 'SELECT now()');
      return { enabled: false, as_of: row!.now.toISOString(), sinks: [] };
    }
    return rollerView(deps.pool, deps.secrets, { due: due ?? false, intakeBucket: deps.intakeBucket, ...(sink ? { sink } : {}), ...(limit ? { limit } : {}) });
  });
}
