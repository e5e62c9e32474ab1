import { createHash } from 'node:crypto';
import { SEND_BODY_LIMIT } from '@tablemere/contracts';
import { usageError } from './errors.ts';
import type { InputRow } from './json-input.ts';

/** `[` and `]` around every batch. */
const BRACKETS = 2;
const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');

/** The largest row that fits a batch on its own: the body is `[` + row + `]`. */
export const maxRowBytes = (maxBatchBytes: number) => maxBatchBytes - BRACKETS;

/** One request's worth of rows, ready to send. */
export interface Batch {
  /** 1-based, in input order. */
  readonly part: number;
  /** The Idempotency-Key: the same for the same input, so a re-run replays rather than duplicates. */
  readonly id: string;
  /** A JSON array holding the rows' bytes unchanged, separated by commas. */
  readonly body: Buffer;
  readonly rows: number;
  /** Input position of the batch's first row, for messages. */
  readonly firstRow: number;
}

/** Characters the send route accepts in an Idempotency-Key, and its length. */
export const BATCH_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** Checks a `--batch-id` before anything is read or sent: any Idempotency-Key will do. */
export function checkBatchId(id: string): string {
  if (!BATCH_ID_PATTERN.test(id)) throw usageError(`--batch-id '${id}': use 1-128 characters of A-Z a-z 0-9 . _ : -`);
  return id;
}

/**
 * The batch id of one part. With `--batch-id ID` the first part is exactly ID and the others
 * `ID-2`, `ID-3`, ... (so a send that is one batch is the batch ID, and a stream need not know
 * ahead whether more parts follow); without it, `<24 hex of the body's SHA-256>-<part>`. Both
 * depend only on the input (the split is deterministic), so sending the same input again names
 * the same batches and the intake answers each from its ledger instead of storing it twice.
 * The part number keeps two equal bodies within one input apart.
 */
export function batchId(body: Buffer, part: number, given?: string): string {
  if (given !== undefined) {
    if (part === 1) return given;
    const id = `${given}-${part}`;
    if (id.length > 128) throw usageError(`--batch-id '${given}': part ${part} would be named ${id}, longer than 128 characters; use a shorter id`);
    return id;
  }
  return `${createHash('sha256').update(body).digest('hex').slice(0, 24)}-${part}`;
}

export interface PackOptions {
  /** Default SEND_BODY_LIMIT, the send route's limit on one body; smaller in tests. */
  readonly maxBatchBytes?: number;
  /** `--batch-id`: the first batch's id, and the stem of the others'. */
  readonly batchId?: string;
}

/**
 * Packs rows, in order, into the fewest JSON array bodies of at most `maxBatchBytes` each (a
 * batch closes when the next row would not fit). Holds one batch's rows at a time.
 */
export async function* packBatches(rows: AsyncIterable<InputRow>, options: PackOptions = {}): AsyncGenerator<Batch> {
  const limit = options.maxBatchBytes ?? SEND_BODY_LIMIT;
  let held: Buffer[] = [];
  let size = BRACKETS;
  let firstRow = 0;
  let part = 0;

  const close = (): Batch => {
    const pieces: Buffer[] = [OPEN];
    for (const [i, row] of held.entries()) pieces.push(...(i === 0 ? [row] : [COMMA, row]));
    pieces.push(CLOSE);
    const body = Buffer.concat(pieces, size);
    part += 1;
    const batch = { part, id: batchId(body, part, options.batchId), body, rows: held.length, firstRow };
    held = [];
    size = BRACKETS;
    return batch;
  };

  for await (const row of rows) {
    const grown = size + (held.length > 0 ? 1 : 0) + row.bytes.length;
    if (held.length > 0 && grown > limit) yield close();
    if (held.length === 0) {
      if (BRACKETS + row.bytes.length > limit) {
        // json-input refuses such rows first; this guards a caller that skipped it.
        throw usageError(`row ${row.index} is ${row.bytes.length} bytes; a batch holds at most ${limit} bytes`);
      }
      firstRow = row.index;
      size = BRACKETS + row.bytes.length;
    } else {
      size += 1 + row.bytes.length;
    }
    held.push(row.bytes);
  }
  if (held.length > 0) yield close();
}
