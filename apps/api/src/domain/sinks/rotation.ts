import type { RotatedSendKey, RotateSendKeyOptions } from '@tablemere/contracts';
import { query, queryOne, transaction, type Pool, type Queryable } from '@tablemere/db';
import { apiError } from '../../errors.ts';
import { recordAudit } from '../audit.ts';
import type { Principal } from '../principal.ts';
import { findSink } from './list.ts';
import { generateSendKey, sendKeyDigest } from './send-keys.ts';
import { describeSinks, type SinkViewContext } from './view.ts';

/**
 * Send key rotation: a new key, and the old one kept (as its digest) beside it until the
 * overlap ends, so a fleet moves to the new key before the old one stops. A sink holds two
 * keys at most: a rotation while an overlap lasts is refused unless it finishes that one.
 *
 * An old key is retired (its digest cleared, `sink.key_retired` recorded) at its overlap's end
 * by the maintenance sweep (retireEndedKeys), at once by `finish` or an overlap of 0, or
 * by the next rotation when the sweep has not run yet. It stops answering at its overlap's end
 * whether or not it was retired: the send route reads the end, not the retirement.
 */

/** Why an old key stopped, as `sink.key_retired` says. */
type RetiredBecause = 'overlap_ended' | 'finished' | 'no_overlap';

interface OldKey {
  id: string;
  project_id: string;
  name: string;
  /** When it stops (or stopped); null when the sink has no old key. */
  stops_at: Date | null;
  in_overlap: boolean;
  now: Date;
}

/** Clears the old key of `sink` and records why and when it stopped. */
async function retireOldKey(db: Queryable, sink: Pick<OldKey, 'id' | 'project_id' | 'name'>, actorKeyId: string | null, because: RetiredBecause, stoppedAt: Date): Promise<void> {
  await query(db, 'UPDATE sinks SET previous_key_sha256 = NULL, previous_key_stops_at = NULL WHERE id = $1', [sink.id]);
  await recordAudit(db, {
    projectId: sink.project_id,
    actorKeyId,
    event: 'sink.key_retired',
    subject: sink.id,
    details: { name: sink.name, reason: because, stopped_at: stoppedAt.toISOString() },
  });
}

const sinkGone = (ref: string) => apiError('sink_not_found', { message: `Sink ${ref} is deleted; a deleted sink's keys cannot be rotated.`, details: { sink: ref } });

/**
 * Gives a live sink a new send key, answered this once with the sink. The key it had keeps
 * working for `overlap_seconds` (none with 0). 409 key_rotation_in_progress while an earlier
 * rotation's old key still works, unless `finish` stops that key first.
 */
export async function rotateSendKey(deps: SinkViewContext & { pool: Pool }, principal: Principal, ref: string, options: RotateSendKeyOptions): Promise<RotatedSendKey> {
  const target = await findSink(deps.pool, principal.projectId, ref);
  if (target.deleted_at) throw sinkGone(ref);
  const sendKey = generateSendKey(target.id);
  await transaction(deps.pool, async (client) => {
    // Locked, so two rotations at once are one after the other: the second sees the first's overlap.
    const sink = await queryOne<OldKey>(
      client,
      `SELECT id, project_id, name, previous_key_stops_at AS stops_at, coalesce(previous_key_stops_at > now(), false) AS in_overlap, now() AS now
         FROM sinks WHERE id = $1 AND deleted_at IS NULL FOR UPDATE`,
      [target.id],
    );
    if (!sink) throw sinkGone(ref);
    if (sink.stops_at !== null) {
      if (sink.in_overlap && !options.finish) {
        throw apiError('key_rotation_in_progress', {
          message: `Sink ${sink.name}'s old send key works until ${sink.stops_at.toISOString()}; rotate again after that, or with {"finish": true} to stop it now.`,
          details: { sink: sink.id, old_key_stops_at: sink.stops_at.toISOString() },
        });
      }
      // An overlap that ran out before the sweep came is the platform's doing, as the sweep records it.
      if (sink.in_overlap) await retireOldKey(client, sink, principal.keyId, 'finished', sink.now);
      else await retireOldKey(client, sink, null, 'overlap_ended', sink.stops_at);
    }
    const overlap = options.overlap_seconds;
    const rotated = (await queryOne<{ stops_at: Date | null }>(
      client,
      `UPDATE sinks SET previous_key_sha256 = CASE WHEN $2 > 0 THEN send_key_sha256 END,
                        previous_key_stops_at = CASE WHEN $2 > 0 THEN now() + make_interval(secs => $2) END,
                        send_key_sha256 = $3, key_rotated_at = now()
        WHERE id = $1 RETURNING previous_key_stops_at AS stops_at`,
      [sink.id, overlap, sendKeyDigest(sendKey)],
    ))!;
    await recordAudit(client, {
      projectId: sink.project_id,
      actorKeyId: principal.keyId,
      event: 'sink.key_rotated',
      subject: sink.id,
      details: { name: sink.name, overlap_seconds: overlap, old_key_stops_at: rotated.stops_at?.toISOString() ?? null, finished_earlier_rotation: sink.in_overlap },
    });
    if (overlap === 0) await retireOldKey(client, sink, principal.keyId, 'no_overlap', sink.now);
  });
  const [view] = await describeSinks(deps.pool, deps, [await findSink(deps.pool, principal.projectId, target.id)]);
  return { ...view!, send_key: sendKey };
}

/**
 * Retires every old key whose overlap has ended: the maintenance task `send_key_retire`.
 * Each in its own transaction, the row locked and read again, so a sweep and a rotation at
 * the same moment never retire one key twice. Returns how many were retired.
 */
export async function retireEndedKeys(pool: Pool): Promise<number> {
  const due = await query<{ id: string }>(pool, 'SELECT id FROM sinks WHERE previous_key_sha256 IS NOT NULL AND previous_key_stops_at <= now()');
  let retired = 0;
  for (const { id } of due) {
    retired += await transaction(pool, async (client) => {
      const sink = await queryOne<Pick<OldKey, 'id' | 'project_id' | 'name'> & { stops_at: Date }>(
        client,
        `SELECT id, project_id, name, previous_key_stops_at AS stops_at FROM sinks
          WHERE id = $1 AND previous_key_sha256 IS NOT NULL AND previous_key_stops_at <= now() FOR UPDATE`,
        [id],
      );
      if (!sink) return 0;
      await retireOldKey(client, sink, null, 'overlap_ended', sink.stops_at);
      return 1;
    });
  }
  return retired;
}
