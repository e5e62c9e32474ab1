import {
  KEEP_SNAPSHOTS_MAX,
  KEEP_SNAPSHOTS_MIN,
  LINGER_MS_MAX,
  MIN_SNAPSHOT_AGE_SECONDS_MAX,
  Sink,
  SinkParams,
  UpdateSinkRequest,
} from '@tablemere/contracts';
import type { FastifyInstance } from 'fastify';
import { updateSink as update } from '../../domain/sinks/settings.ts';
import { principalOf } from '../../http/auth.ts';
import { parse } from '../../http/parse.ts';
import type { SinkRouteDeps } from './context.ts';
import { BATCH_IDS_TEXT } from './send.ts';

/** PATCH /v1/sinks/{id|name}: change a sink's settings after create. */
export function updateSink(app: FastifyInstance, deps: SinkRouteDeps): void {
  app.patch('/v1/sinks/:sink', {
    config: {
      openapi: {
        id: 'updateSink', tag: 'sinks', summary: "Change a sink's settings",
        description: [
          `Send only the settings to change; the others stay. \`keep_snapshots\` (${KEEP_SNAPSHOTS_MIN} to ${KEEP_SNAPSHOTS_MAX}) is how many snapshots of the table's \`main\` upkeep keeps; \`min_snapshot_age_seconds\` (0 to ${MIN_SNAPSHOT_AGE_SECONDS_MAX}, a year) keeps every snapshot younger than that, whatever the count. A larger \`history.expire.min-snapshots-to-keep\` or \`history.expire.max-snapshot-age-ms\` on the table wins. \`unknown_fields\` (\`reject\` or \`add_columns\`) is what the next roll does with row fields the table lacks. \`linger_ms\` (0 to ${LINGER_MS_MAX}) is how long a send may wait for others to share its intake object: 0 writes each at once (with those that arrived during the sink's previous write); more trades that latency per send for fewer store requests.`,
          `${BATCH_IDS_TEXT} Batches already stored keep their ids: a change applies to sends from then on.`,
          'The next upkeep run (or roll, for `unknown_fields`; send, for `linger_ms` and `batch_ids`: at once on this API process, within 30 s on others) follows the new values; nothing is expired by the change itself. Event: `sink.update`, with each changed setting\'s old and new value. A body naming no setting is 400 `nothing_to_update`, a value out of range 400 `invalid_request` naming the field.',
        ].join('\n\n'),
        params: SinkParams,
        paramDescriptions: { sink: "The sink's id or name (a live sink)" },
        body: { schema: UpdateSinkRequest, examples: { week: { summary: 'Keep a week of hourly snapshots', value: { keep_snapshots: 168, min_snapshot_age_seconds: 3600 } } } },
        answers: { 200: { description: 'The sink with its new settings', schema: Sink } },
        errors: ['sink_not_found', 'nothing_to_update'],
      },
    },
  }, async (request): Promise<Sink> => {
    const params = parse(SinkParams, request.params, 'params');
    const body = parse(UpdateSinkRequest, request.body, 'body');
    const sink = await update(deps, principalOf(request), params.sink, body);
    // The send route reads linger_ms and batch_ids with the key: this process follows at once, others within the key cache's freshness.
    deps.sendKeys.forget(sink.id);
    return sink;
  });
}
