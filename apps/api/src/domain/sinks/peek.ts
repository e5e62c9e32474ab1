import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import type { PendingQuery, RejectsQuery } from '@tablemere/contracts';
import { type Queryable, query, queryOne } from '@tablemere/db';
import { BATCH_SUFFIX, type ObjectStore, StoreError, batchKey, decodeSegment, isStoreError, rejectsPrefix, segmentKey } from '@tablemere/store';
import type { FastifyBaseLogger } from 'fastify';
import { apiError, RETRY_AFTER_SECONDS } from '../../errors.ts';

/**
 * Read-only views into a sink's intake (`sink rejects`, `sink tail`): rows are read line by
 * line from the stored objects and never held beyond one page, and nothing is consumed or
 * changed. Rows are answered with their original bytes, so the answers are assembled as JSON
 * text around those bytes rather than serialised from parsed values (which would round
 * integers past 2^53).
 */

/** Row text one answer carries at most; a single row larger than this still goes out alone. */
export const PEEK_ANSWER_BYTES = 4 * 1024 * 1024;

/** Where a page of rejects resumes: this file, after this many of its lines. */
interface RejectsCursor {
  key: string;
  line: number;
}

function encodeCursor(cursor: RejectsCursor): string {
  return Buffer.from(JSON.stringify([cursor.key, cursor.line])).toString('base64url');
}

function decodeCursor(text: string, prefix: string): RejectsCursor {
  try {
    const [key, line] = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown[];
    if (typeof key === 'string' && key.startsWith(prefix) && Number.isSafeInteger(line) && (line as number) >= 0) {
      return { key, line: line as number };
    }
  } catch {
    // falls through to the refusal
  }
  throw apiError('invalid_request', {
    message: 'query.cursor: not a cursor of this sink; pass next_cursor from the previous page as it was given',
    details: { issues: [{ path: ['query', 'cursor'], code: 'custom', message: 'not a cursor of this sink' }] },
  });
}

/** The lines of a stored object, numbered from 1, skipping the first `skip`; the stream is closed when the caller stops. */
async function* objectLines(body: Readable, skip: number): AsyncGenerator<{ text: string; line: number }> {
  const lines = createInterface({ input: body, crlfDelay: Infinity });
  let line = 0;
  try {
    for await (const text of lines) {
      line += 1;
      if (line <= skip || text.length === 0) continue;
      yield { text, line };
    }
  } finally {
    lines.close();
    body.destroy();
  }
}

/** The object at `key`, or undefined when a roll or the sweep removed it meanwhile. */
async function openObject(store: ObjectStore, key: string): Promise<Awaited<ReturnType<ObjectStore['get']>> | undefined> {
  try {
    return await store.get(key);
  } catch (error) {
    if (isStoreError(error, 'not_found')) return undefined;
    throw error;
  }
}

/**
 * A pending batch's bytes: its own object (the one-object-per-batch layout), its range of its
 * segment, or, where the ledger does not know the range (a batch found in a segment whose
 * writer died), the segment's header tells it. Undefined when a roll removed it meanwhile.
 */
async function openBatch(store: ObjectStore, sinkId: string, batch: PendingBatchRow): Promise<Readable | undefined> {
  if (batch.segment_id === null) return (await openObject(store, batchKey(sinkId, batch.batch_id)))?.body;
  const key = segmentKey(sinkId, batch.segment_id);
  if (batch.segment_offset !== null) {
    const start = Number(batch.segment_offset);
    const object = await openRange(store, key, start, start + Number(batch.bytes) - 1);
    return object?.body;
  }
  const object = await openObject(store, key);
  if (object === undefined) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of object.body) chunks.push(chunk as Buffer);
  const segment = decodeSegment(Buffer.concat(chunks), { sink: sinkId, segment: batch.segment_id });
  const entry = segment.header.batches.find((e) => e.id === batch.batch_id);
  return entry === undefined ? undefined : Readable.from([segment.batch(entry)]);
}

async function openRange(store: ObjectStore, key: string, start: number, end: number): Promise<Awaited<ReturnType<ObjectStore['get']>> | undefined> {
  try {
    return await store.get(key, { range: { start, end } });
  } catch (error) {
    if (isStoreError(error, 'not_found')) return undefined;
    throw error;
  }
}

/**
 * A stored line as JSON text, or undefined (logged) when it is not JSON, or not an object where
 * one is needed (a rejects line; a pending row may be any value, the roll rejects non-objects).
 */
function jsonText(text: string, where: string, log: FastifyBaseLogger, objectOnly: boolean): string | undefined {
  const trimmed = text.trim();
  try {
    const value: unknown = JSON.parse(trimmed);
    if (!objectOnly || (trimmed.startsWith('{') && typeof value === 'object' && value !== null && !Array.isArray(value))) return trimmed;
  } catch {
    // logged below
  }
  log.warn({ where }, `sink peek: skipped a stored line that is not ${objectOnly ? 'a JSON object' : 'JSON'}`);
  return undefined;
}

export interface PeekDeps {
  intake: ObjectStore;
  log: FastifyBaseLogger;
}

/** A store that cannot be read is the intake being unavailable for now: 503 with Retry-After. */
async function reading<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof StoreError)) throw error;
    throw apiError('intake_unavailable', {
      message: 'The intake store could not be read; retry after Retry-After seconds.',
      headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
      details: { retry_after: RETRY_AFTER_SECONDS },
      cause: error,
    });
  }
}

/**
 * One page of the rows a sink's rolls rejected, as the RejectsPage JSON text. Files are taken
 * in key (batch id) order from the cursor on, skipping those written before `since`.
 */
export function rejectsPage(deps: PeekDeps, sinkId: string, q: RejectsQuery): Promise<string> {
  return reading(() => readRejects(deps, sinkId, q));
}

async function readRejects(deps: PeekDeps, sinkId: string, q: RejectsQuery): Promise<string> {
  const prefix = rejectsPrefix(sinkId);
  const since = q.since === undefined ? undefined : new Date(q.since).getTime();
  const items: string[] = [];
  let bytes = 0;
  let next: RejectsCursor | undefined;

  // Reads one rejects file into the page; false once the page is full.
  const take = async (key: string, skip: number): Promise<boolean> => {
    const object = await openObject(deps.intake, key);
    if (object === undefined) return true;
    const writtenAt = object.head.lastModified;
    if (writtenAt === undefined || (since !== undefined && writtenAt.getTime() < since)) {
      object.body.destroy();
      return true;
    }
    const head = `{"line":`;
    const stamp = `,"written_at":${JSON.stringify(writtenAt.toISOString())},`;
    for await (const { text, line } of objectLines(object.body, skip)) {
      if (items.length >= q.limit || (items.length > 0 && bytes >= PEEK_ANSWER_BYTES)) {
        next = { key, line: line - 1 };
        return false;
      }
      const row = jsonText(text, `${key}:${line}`, deps.log, true);
      if (row === undefined) continue;
      items.push(`${head}${line}${stamp}${row.slice(1)}`);
      bytes += row.length;
    }
    return true;
  };

  const cursor = q.cursor === undefined ? undefined : decodeCursor(q.cursor, prefix);
  let open = cursor === undefined || (await take(cursor.key, cursor.line));
  if (open) {
    listing: for await (const page of deps.intake.list(prefix, { delimiter: '/', ...(cursor ? { startAfter: cursor.key } : {}) })) {
      for (const object of page.objects) {
        if (!object.key.endsWith(BATCH_SUFFIX)) continue;
        // The listing's date spares a GET of every file older than `since`.
        if (since !== undefined && object.lastModified !== undefined && object.lastModified.getTime() < since) continue;
        open = await take(object.key, 0);
        if (!open) break listing;
      }
    }
  }

  return (
    `{"sink_id":${JSON.stringify(sinkId)},"prefix":${JSON.stringify(deps.intake.uri(prefix))},` +
    `"rejects":[${items.join(',')}],"next_cursor":${next === undefined ? 'null' : JSON.stringify(encodeCursor(next))}}`
  );
}

interface PendingBatchRow {
  batch_id: string;
  received_at: Date;
  /** Lines of the stored batch: the ledger's objects and other elements together. */
  lines: number;
  bytes: string;
  segment_id: string | null;
  segment_offset: string | null;
}

/**
 * The newest `limit` rows waiting for the roll, oldest of them first, as the PendingRows JSON
 * text. The ledger names the pending batches, newest first, and how many rows each holds, so
 * only the batches (and the rows at their ends) that make up the answer are read; a batch
 * rolled meanwhile is skipped. Nothing is consumed.
 */
export function pendingRows(deps: PeekDeps & { db: Queryable }, sinkId: string, q: PendingQuery): Promise<string> {
  return reading(() => readPending(deps, sinkId, q));
}

async function readPending(deps: PeekDeps & { db: Queryable }, sinkId: string, q: PendingQuery): Promise<string> {
  const totals = await queryOne<{ batches: string; rows: string }>(
    deps.db,
    `SELECT count(*) AS batches, coalesce(sum(rows + rejected), 0) AS rows FROM sink_batches WHERE sink_id = $1 AND state = 'pending'`,
    [sinkId],
  );
  const rowsWaiting = Number(totals?.rows ?? 0);
  // At most `limit` batches can contribute (each holds at least one line).
  const newest = await query<PendingBatchRow>(
    deps.db,
    `SELECT batch_id, received_at, rows + rejected AS lines, bytes, segment_id, segment_offset FROM sink_batches
      WHERE sink_id = $1 AND state = 'pending'
      ORDER BY received_at DESC, batch_id DESC LIMIT $2`,
    [sinkId, q.limit],
  );

  // Newest batch first, each contributing the rows at its end, within the row and byte budgets.
  const perBatch: string[][] = [];
  let wanted = q.limit;
  let budget = PEEK_ANSWER_BYTES;
  for (const batch of newest) {
    if (wanted === 0 || budget <= 0) break;
    const body = await openBatch(deps.intake, sinkId, batch);
    if (body === undefined) continue;
    const take = Math.min(wanted, batch.lines);
    const head = `{"batch_id":${JSON.stringify(batch.batch_id)},"received_at":${JSON.stringify(batch.received_at.toISOString())},"line":`;
    // The last `take` lines, dropping the oldest kept ones while over the byte budget.
    const kept: { item: string; size: number }[] = [];
    let keptBytes = 0;
    for await (const { text, line } of objectLines(body, batch.lines - take)) {
      const row = jsonText(text, `${batch.batch_id}:${line}`, deps.log, false);
      if (row === undefined) continue;
      kept.push({ item: `${head}${line},"row":${row}}`, size: row.length });
      keptBytes += row.length;
      if (kept.length > take) keptBytes -= kept.shift()!.size;
      while (kept.length > 1 && keptBytes > budget) keptBytes -= kept.shift()!.size;
    }
    perBatch.push(kept.map((k) => k.item));
    wanted -= kept.length;
    budget -= keptBytes;
  }

  const rows = perBatch.reverse().flat();
  return (
    `{"sink_id":${JSON.stringify(sinkId)},"batches_waiting":${Number(totals?.batches ?? 0)},"rows_waiting":${rowsWaiting},` +
    `"rows":[${rows.join(',')}],"truncated":${rowsWaiting > rows.length}}`
  );
}
