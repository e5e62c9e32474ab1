import {
  KEY_OVERLAP_SECONDS_DEFAULT,
  KEY_OVERLAP_SECONDS_MAX,
  RotatedSendKey,
  RotateSendKeyQuery,
  RotateSendKeyRequest,
  type RotateSendKeyOptions,
  SinkParams,
} from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { rotateSendKey as rotate } from '../../domain/sinks/rotation.ts';
import { invalidRequest } from '../../errors.ts';
import { principalOf } from '../../http/auth.ts';
import { parse } from '../../http/parse.ts';
import type { SinkRouteDeps } from './context.ts';

/**
 * The options from the body and the query together, defaults applied. An option given both
 * ways with different values is refused: neither can be picked without surprising its sender.
 */
function rotateOptions(body: RotateSendKeyRequest, query: RotateSendKeyQuery): RotateSendKeyOptions {
  for (const field of ['overlap_seconds', 'finish'] as const) {
    const [inBody, inQuery] = [body[field], query[field]];
    if (inBody !== undefined && inQuery !== undefined && inBody !== inQuery) {
      const message = `${inBody} here but ${inQuery} in the query; give it one way`;
      throw invalidRequest(new z.ZodError([{ code: 'custom', path: [field], message, input: inBody }]), 'body');
    }
  }
  return {
    overlap_seconds: body.overlap_seconds ?? query.overlap_seconds ?? KEY_OVERLAP_SECONDS_DEFAULT,
    finish: body.finish ?? query.finish ?? false,
  };
}

/** POST /v1/sinks/{id|name}/send-key/rotate: a new send key, shown this once; the old one works for the overlap. */
export function rotateSendKey(app: FastifyInstance, deps: SinkRouteDeps): void {
  app.post('/v1/sinks/:sink/send-key/rotate', {
    config: {
      openapi: {
        id: 'rotateSendKey', tag: 'sinks', summary: "Rotate a sink's send key",
        description: [
          `Answers the sink with a new send key, shown this once (tablemere keeps only its hash). The key it had keeps working beside the new one for \`overlap_seconds\` (default ${KEY_OVERLAP_SECONDS_DEFAULT}, ${KEY_OVERLAP_SECONDS_DEFAULT / 3600} hours; 0 to ${KEY_OVERLAP_SECONDS_MAX}, ${KEY_OVERLAP_SECONDS_MAX / 86_400} days; 0 stops it at once), then answers 401 \`unauthorized\` like any wrong key; \`key_rotation.old_key_stops_at\` says when. Nothing else changes: batches stored with either key roll as usual.`,
          'While an old key still works, another rotation is 409 `key_rotation_in_progress`, unless `finish: true` stops that old key now (a sink holds two keys at most). Events: `sink.key_rotated`, and `sink.key_retired` when an old key stops (at once with `finish` or an overlap of 0; otherwise recorded by the API\'s maintenance sweep after the overlap\'s end). Deleting the sink stops every key at once.',
          'The options are a JSON body; no body, or `{}`, takes the defaults. An unknown field or a wrong type is 400 `invalid_request` naming it, and nothing is rotated. The query form (`?overlap_seconds=N&finish=true`) is still read, for callers written before the body; a query parameter it does not know is 400 too, and an option given both ways with different values is 400 `invalid_request` naming it (the same value both ways is taken).',
        ].join('\n\n'),
        params: SinkParams,
        paramDescriptions: {
          sink: "The sink's id or name",
          overlap_seconds: 'Kept for compatibility; prefer the body: seconds the old key keeps working beside the new one',
          finish: 'Kept for compatibility; prefer the body: stop the old key of an earlier rotation still in its overlap now, then rotate',
        },
        query: RotateSendKeyQuery,
        body: {
          schema: RotateSendKeyRequest,
          required: false,
          examples: {
            leaked: { summary: 'A leaked key: stop the old one at once', value: { overlap_seconds: 0 } },
            planned: { summary: 'Two days to move every producer', value: { overlap_seconds: 2 * 86_400 } },
          },
        },
        answers: { 200: { description: 'The sink with its new send key', schema: RotatedSendKey } },
        errors: ['sink_not_found', 'key_rotation_in_progress'],
      },
    },
  }, async (request): Promise<RotatedSendKey> => {
    const params = parse(SinkParams, request.params, 'params');
    const query = parse(RotateSendKeyQuery, request.query, 'query');
    // No body (or an empty one) takes the defaults; anything else must be the options object.
    const body = parse(RotateSendKeyRequest, request.body === undefined ? {} : request.body, 'body');
    const rotated = await rotate(deps, principalOf(request), params.sink, rotateOptions(body, query));
    // This process refuses a stopped old key from now on; the others within the key cache's freshness.
    deps.sendKeys.forget(rotated.id);
    return rotated;
  });
}
