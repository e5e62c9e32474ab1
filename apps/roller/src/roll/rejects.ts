import type { RowReject } from '@tablemere/iceberg';
import { BATCH_CONTENT_TYPE, rejectsKey } from '@tablemere/store';
import { toRollError } from '../errors.ts';
import { checkpoint, type RollContext } from './context.ts';
import type { Validation } from './validate.ts';

/** Every reason a row can land in a rejects file: the converter's, and a batch that does not parse. */
export type RejectsReason = RowReject['reason'] | 'batch_unreadable';

/**
 * One line of a rejects file: `{batch_id, row, reason, field, expected, got, message}`, with
 * `row` the original row's bytes exactly as the producer sent them (they are valid JSON, or
 * the row would be batch_unreadable). `expected` and `got` are null when they do not apply.
 */
export function rejectLine(batchId: string, rowJson: string, reject: RowReject): string {
  return (
    `{"batch_id":${JSON.stringify(batchId)},"row":${rowJson},"reason":${JSON.stringify(reject.reason)},` +
    `"field":${JSON.stringify(reject.field)},"expected":${JSON.stringify(reject.expected ?? null)},` +
    `"got":${JSON.stringify(reject.got ?? null)},"message":${JSON.stringify(reject.message)}}`
  );
}

/**
 * The rejects lines of a batch that cannot be parsed: every line of it, each as a JSON string
 * in `row` (the bytes are not JSON, so they cannot be inlined), or, for bytes that are not
 * UTF-8 text at all, the whole object once in base64 (`row_base64`).
 */
export function unreadableLines(batchId: string, content: { lines: readonly string[] } | { bytes: Uint8Array }, message: string): string[] {
  const head = `{"batch_id":${JSON.stringify(batchId)},`;
  const tail = `"reason":"batch_unreadable","field":"","expected":null,"got":null,"message":${JSON.stringify(message)}}`;
  if ('bytes' in content) return [`${head}"row":null,"row_base64":${JSON.stringify(Buffer.from(content.bytes).toString('base64'))},${tail}`];
  return content.lines.map((line) => `${head}"row":${JSON.stringify(line)},${tail}`);
}

const WRITE_CONCURRENCY = 8;

/**
 * Step 6, rejects: one file per batch that had rejected rows, at
 * `_sink/<sink_id>/rejects/<batch_id>.ndjson`. Written before the commit, so a batch is only
 * ever consumed after its rejects are durable; a re-roll of the same batch writes the same file.
 */
export async function writeRejects(ctx: RollContext, validation: Validation): Promise<void> {
  checkpoint(ctx);
  const pending = validation.batches.filter((b) => b.rejectLines.length > 0);
  let next = 0;
  const worker = async () => {
    while (next < pending.length) {
      const batch = pending[next++]!;
      const body = Buffer.from(`${batch.rejectLines.join('\n')}\n`, 'utf8');
      try {
        await ctx.intake.put(rejectsKey(ctx.sink.id, batch.id), body, { contentType: BATCH_CONTENT_TYPE });
      } catch (error) {
        throw toRollError(error, 'intake');
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(WRITE_CONCURRENCY, pending.length) }, worker));
}
