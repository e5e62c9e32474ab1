import { InternalSinkParams, RollIntentRequest, RollIntent } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import type { InternalRouteDeps } from '../../deps.ts';
import { createRollIntent } from '../../domain/rolls/intents.ts';
import { parse } from '../../http/parse.ts';

/**
 * POST /internal/sinks/{id}/rolls: record the roll's intent before committing. 201 with the
 * intent; 200 with the recorded one when the same intent was posted before.
 */
export function createRoll(app: FastifyInstance, deps: InternalRouteDeps): void {
  app.post('/internal/sinks/:id/rolls', {
    config: {
      openapi: {
        id: 'createRollIntent', tag: 'roller', summary: "Record a roll's intent before committing",
        params: InternalSinkParams,
        body: { schema: RollIntentRequest },
        answers: {
          201: { description: 'The intent, recorded', schema: RollIntent },
          200: { description: 'The same intent, recorded before', schema: RollIntent },
        },
        errors: ['sink_not_found', 'lease_lost', 'roll_conflict'],
      },
    },
  }, async (request, reply): Promise<RollIntent> => {
    const { id } = parse(InternalSinkParams, request.params, 'params');
    const { intent, created } = await createRollIntent(deps.pool, id, parse(RollIntentRequest, request.body, 'body'));
    void reply.status(created ? 201 : 200);
    return intent;
  });
}
