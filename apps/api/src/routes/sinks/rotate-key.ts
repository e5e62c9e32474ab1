import { KEY_OVERLAP_SECONDS_DEFAULT, KEY_OVERLAP_SECONDS_MAX, RotatedSendKey, RotateSendKeyQuery, SinkParams } from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import { rotateSendKey as rotate } from '../../domain/key-rotation.ts';
import { principalOf } from '../../http/auth.ts';
import { parse } from '../../http/parse.ts';
import type { SinkRouteDeps } from './context.ts';

/** POST /v1/sinks/{id|name}/send-key/rotate: a new send key, shown this once; the old one works for the overlap. */
export function rotateSendKey(app: FastifyInstance, deps: SinkRouteDeps): void {
  app.post('/v1/sinks/:sink/send-key/rotate', {
    config: {
      openapi: {
        id: 'rotateSendKey', tag: 'sinks', summary: "Rotate a sink's send key",
        description: [
          `Answers the sink with a new send key, shown this once (tablemere keeps only its hash). The key it had keeps working beside the new one for \`overlap_seconds\` (default ${KEY_OVERLAP_SECONDS_DEFAULT}, a day; 0 to ${KEY_OVERLAP_SECONDS_MAX}, 7 days; 0 stops it at once), then answers 401 \`unauthorized\` like any wrong key; \`key_rotation.old_key_stops_at\` says when. Nothing else changes: batches stored with either key roll as usual.`,
          'While an old key still works, another rotation is 409 `key_rotation_in_progress`, unless `finish=true` stops that old key now (a sink holds two keys at most). Events: `sink.key_rotated`, and `sink.key_retired` when an old key stops (at once with `finish=true` or an overlap of 0; otherwise recorded by the API\'s maintenance sweep after the overlap\'s end). Deleting the sink stops every key at once.',
        ].join('\n\n'),
        params: SinkParams,
        paramDescriptions: {
          sink: "The sink's id or name",
          overlap_seconds: 'Seconds the old key keeps working beside the new one',
          finish: 'Stop the old key of an earlier rotation still in its overlap now, then rotate',
        },
        query: RotateSendKeyQuery,
        answers: { 200: { description: 'The sink with its new send key', schema: RotatedSendKey } },
        errors: ['sink_not_found', 'key_rotation_in_progress'],
      },
    },
  }, async (request): Promise<RotatedSendKey> => {
    const params = parse(SinkParams, request.params, 'params');
    const options = parse(RotateSendKeyQuery, request.query, 'query');
    const rotated = await rotate(deps, principalOf(request), params.sink, options);
    // This process refuses a stopped old key from now on; the others within the key cache's freshness.
    deps.sendKeys.forget(rotated.id);
    return rotated;
  });
}
