import { SINK_ID_PATTERN, type Sink, type SinkListQuery } from '@tablemere/contracts';
import { query, queryOne, type Queryable } from '@tablemere/db';
import { apiError } from '../../errors.ts';
import { describeSinks, SINK_COLUMNS, SINK_FROM, type SinkRow, type SinkViewContext } from './view.ts';

/** The project's sinks, oldest first: live ones, or all with `include_deleted`. */
export async function listSinks(db: Queryable, context: SinkViewContext, projectId: string, filter: SinkListQuery): Promise<Sink[]> {
  const values: unknown[] = [projectId];
  let where = 's.project_id = $1';
  if (!filter.include_deleted) where += ' AND s.deleted_at IS NULL';
  if (filter.stalled) where += ' AND s.roll_error IS NOT NULL';
  if (filter.warehouse !== undefined) {
    values.push(filter.warehouse);
    where += ` AND w.name = $${values.length}`;
  }
  const rows = await query<SinkRow>(db, `SELECT ${SINK_COLUMNS} FROM ${SINK_FROM} WHERE ${where} ORDER BY s.created_at, s.id`, values);
  return describeSinks(db, context, rows);
}

/**
 * A project's sink by `{id|name}`: an id finds the sink even once deleted, a name only the
 * live sink of that name. 404 sink_not_found otherwise.
 */
export async function findSink(db: Queryable, projectId: string, ref: string): Promise<SinkRow> {
  const byId = SINK_ID_PATTERN.test(ref);
  const row = await queryOne<SinkRow>(
    db,
    `SELECT ${SINK_COLUMNS} FROM ${SINK_FROM} WHERE s.project_id = $1 AND ${byId ? 's.id = $2' : 's.name = $2 AND s.deleted_at IS NULL'}`,
    [projectId, ref],
  );
  if (!row) {
    throw apiError('sink_not_found', {
      message: `No sink ${byId ? 'with id' : 'named'} ${ref} in this project; list them with GET /v1/sinks.`,
      details: { sink: ref },
    });
  }
  return row;
}
