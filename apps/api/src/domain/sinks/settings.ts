import type { Sink, UpdateSinkRequest } from '@tablemere/contracts';
import { query, queryOne, transaction, type Pool } from '@tablemere/db';
import { apiError } from '../../errors.ts';
import { recordAudit } from '../audit.ts';
import type { Principal } from '../principal.ts';
import { findSink } from './list.ts';
import { describeSinks, SINK_COLUMNS, SINK_FROM, type SinkRow, type SinkViewContext } from './view.ts';

/**
 * Each changeable setting's column on `sinks`: the PATCH body's fields, one line each. A
 * setting added here and to UpdateSinkRequest is stored, audited and answered with no other
 * change to this module.
 */
const SETTING_COLUMNS = {
  keep_snapshots: 'keep_snapshots',
  min_snapshot_age_seconds: 'min_snapshot_age_seconds',
  unknown_fields: 'unknown_fields',
  linger_ms: 'linger_ms',
  batch_ids: 'batch_ids',
} as const satisfies Record<keyof UpdateSinkRequest, keyof SinkRow>;

type Setting = keyof typeof SETTING_COLUMNS;

export interface UpdateSinkDeps extends SinkViewContext {
  pool: Pool;
}

/**
 * Changes a live sink's settings in one transaction, the row locked so two changes at once
 * audit what each really changed: an audit event `sink.update` with each setting's old and new
 * value (none when every value was already so). The roller reads the settings from the sink
 * list at its next run, so the next upkeep follows.
 */
export async function updateSink(deps: UpdateSinkDeps, principal: Principal, ref: string, request: UpdateSinkRequest): Promise<Sink> {
  const settings = (Object.keys(SETTING_COLUMNS) as Setting[]).filter((key) => request[key] !== undefined);
  if (settings.length === 0) {
    throw apiError('nothing_to_update', { details: { settings: Object.keys(SETTING_COLUMNS) } });
  }
  const target = await findSink(deps.pool, principal.projectId, ref);
  const row = await transaction(deps.pool, async (client) => {
    const before = await queryOne<SinkRow>(client, `SELECT ${SINK_COLUMNS} FROM ${SINK_FROM} WHERE s.id = $1 AND s.deleted_at IS NULL FOR UPDATE OF s`, [target.id]);
    if (!before) throw apiError('sink_not_found', { message: `Sink ${ref} is deleted; its settings no longer apply.`, details: { sink: ref } });
    const assignments = settings.map((key, i) => `${SETTING_COLUMNS[key]} = $${i + 2}`).join(', ');
    await query(client, `UPDATE sinks SET ${assignments} WHERE id = $1`, [target.id, ...settings.map((key) => request[key])]);
    const changes = Object.fromEntries(
      settings.filter((key) => before[SETTING_COLUMNS[key]] !== request[key]).map((key) => [key, { from: before[SETTING_COLUMNS[key]], to: request[key] }]),
    );
    if (Object.keys(changes).length > 0) {
      await recordAudit(client, { projectId: principal.projectId, actorKeyId: principal.keyId, event: 'sink.update', subject: target.id, details: { name: target.name, changes } });
    }
    return (await queryOne<SinkRow>(client, `SELECT ${SINK_COLUMNS} FROM ${SINK_FROM} WHERE s.id = $1`, [target.id]))!;
  });
  const [sink] = await describeSinks(deps.pool, deps, [row]);
  return sink!;
}
