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

/**
 * Step 6, rejects: one file for the whole roll, `_sink/<sink_id>/rejects/<first_id>.ndjson`,
 * named by the first object the roll took (a segment id, or a batch id of the one-object
 * layout); each line names its batch. Written before the commit, so a batch is only ever
 * consumed after its rejects are durable. A roll that failed before its commit is taken up
 * again from the same oldest object, so its retry writes the same file over, never a second.
 */
export async function writeRejects(ctx: RollContext, validation: Validation, firstId: string): Promise<void> {
  checkpoint(ctx);
  const lines = validation.batches.flatMap((b) => b.rejectLines);
  if (lines.length === 0) return;
  try {
    await ctx.intake.put(rejectsKey(ctx.sink.id, firstId), Buffer.from(`${lines.join('\n')}\n`, 'utf8'), { contentType: BATCH_CONTENT_TYPE });
  } catch (error) {
    throw toRollError(error, 'intake');
  }
}
