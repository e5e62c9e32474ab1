import type { Lease, LeaseRequest } from '@tablemere/contracts';
import { query, queryOne, type Queryable } from '@tablemere/db';
import { apiError } from '../../errors.ts';

interface LeaseRow {
  sink_id: string;
  lease_id: string;
  roller_id: string;
  acquired_at: Date;
  expires_at: Date;
}

function toLease(row: LeaseRow): Lease {
  return {
    sink_id: row.sink_id,
    lease_id: row.lease_id,
    roller_id: row.roller_id,
    acquired_at: row.acquired_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
  };
}

/** Who holds the sink's lease now (null when nobody, or only an expired lease is left). */
async function holder(db: Queryable, sinkId: string): Promise<{ roller_id: string; expires_at: string } | null> {
  const row = await queryOne<LeaseRow>(db, 'SELECT * FROM sink_leases WHERE sink_id = $1 AND expires_at > now()', [sinkId]);
  return row ? { roller_id: row.roller_id, expires_at: row.expires_at.toISOString() } : null;
}

/** 404 sink_not_found unless the sink exists and is not deleted. */
export async function requireLiveSink(db: Queryable, sinkId: string, lock = false): Promise<{ project_id: string; state: string; name: string }> {
  const sink = await queryOne<{ project_id: string; state: string; name: string }>(
    db,
    `SELECT project_id, state, name FROM sinks WHERE id = $1 AND deleted_at IS NULL${lock ? ' FOR UPDATE' : ''}`,
    [sinkId],
  );
  if (!sink) throw apiError('sink_not_found', { message: `No live sink has id ${sinkId}.`, details: { sink: sinkId } });
  return sink;
}

/**
 * Takes the sink's lease for `ttl_seconds`, or renews it when `lease_id` is given. One
 * statement each, so two rollers racing cannot both win: a new lease replaces only an
 * expired one; a renewal succeeds only while the lease is still this one (even past its
 * expiry, as long as nobody took it over). 409 lease_held / lease_lost otherwise.
 */
export async function acquireLease(db: Queryable, sinkId: string, request: LeaseRequest): Promise<Lease> {
  await requireLiveSink(db, sinkId);
  const ttl = String(request.ttl_seconds);
  if (request.lease_id !== undefined) {
    const renewed = await queryOne<LeaseRow>(
      db,
      `UPDATE sink_leases SET expires_at = now() + make_interval(secs => $3::int)
       WHERE sink_id = $1 AND lease_id = $2 RETURNING *`,
      [sinkId, request.lease_id, ttl],
    );
    if (renewed) return toLease(renewed);
    throw apiError('lease_lost', { details: { sink: sinkId, holder: await holder(db, sinkId) } });
  }
  const taken = await queryOne<LeaseRow>(
    db,
    `INSERT INTO sink_leases (sink_id, lease_id, roller_id, acquired_at, expires_at)
     VALUES ($1, gen_random_uuid(), $2, now(), now() + make_interval(secs => $3::int))
     ON CONFLICT (sink_id) DO UPDATE
       SET lease_id = EXCLUDED.lease_id, roller_id = EXCLUDED.roller_id,
           acquired_at = EXCLUDED.acquired_at, expires_at = EXCLUDED.expires_at
       WHERE sink_leases.expires_at <= now()
     RETURNING *`,
    [sinkId, request.roller_id, ttl],
  );
  if (taken) return toLease(taken);
  const current = await holder(db, sinkId);
  throw apiError('lease_held', {
    message: `Roller ${current?.roller_id ?? '(another)'} holds this sink's lease; skip the sink and try after expires_at.`,
    details: { sink: sinkId, holder: current },
  });
}

/** Ends the lease if it is still this one; false when it was released or taken over already. */
export async function releaseLease(db: Queryable, sinkId: string, leaseId: string): Promise<boolean> {
  const rows = await query(db, 'DELETE FROM sink_leases WHERE sink_id = $1 AND lease_id = $2 RETURNING sink_id', [sinkId, leaseId]);
  return rows.length > 0;
}

/**
 * 409 lease_lost unless `leaseId` is the sink's lease. `live` also wants it unexpired (before
 * committing: a roller whose lease ran out may have been overtaken); a report after the
 * fact only needs it not to have been taken over.
 */
export async function requireLease(db: Queryable, sinkId: string, leaseId: string, live: boolean): Promise<{ roller_id: string }> {
  const row = await queryOne<LeaseRow & { live: boolean }>(
    db,
    'SELECT *, expires_at > now() AS live FROM sink_leases WHERE sink_id = $1 AND lease_id = $2',
    [sinkId, leaseId],
  );
  if (!row || (live && !row.live)) {
    throw apiError('lease_lost', {
      message: row ? 'This lease has expired; renew it (same lease_id) before recording a roll.' : undefined,
      details: { sink: sinkId, holder: await holder(db, sinkId) },
    });
  }
  return { roller_id: row.roller_id };
}
