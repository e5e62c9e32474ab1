import { SEND_BODY_LIMIT, SendResult, SinkId } from '@tablemere/contracts';
import { z } from 'zod';
import { type Batch, packBatches } from '../batches.ts';
import { CliError } from '../errors.ts';
import { plural } from '../human.ts';
import type { InputRow } from '../json-input.ts';
import { type SendTarget, sendBatch, sinkIdOfTarget } from '../send-client.ts';
import { detailOf, toolRefusal } from './tool-results.ts';

/**
 * Waits between retries within one call stop at this total: agent hosts time tool calls out
 * (the TypeScript SDK client after 60 s), so a longer wait is handed back to the agent instead.
 */
export const RETRY_BUDGET_SECONDS = 30;

export interface SendRowsInput {
  readonly rows: readonly Record<string, unknown>[];
  /** The agent's own Idempotency-Key for the call; else each batch is named by its content. */
  readonly batch_id?: string | undefined;
}

const Count = SendResult.shape.accepted;

/** One batch of a send_rows call: the send route's answer to it, with what the call packed. */
export const SentBatch = SendResult.pick({ batch_id: true, accepted: true, rejected: true, reasons: true, received_at: true }).extend({
  rows: Count,
  body_bytes: Count,
  /** True when the intake already had the batch: it answered the first send's result. */
  replay: z.boolean(),
});
export type SentBatch = z.infer<typeof SentBatch>;

/** send_rows's answer. */
export const SentRows = z.object({
  sink_id: SinkId,
  batches: z.array(SentBatch),
  accepted: Count,
  rejected: Count,
  /** Batches the intake had already stored (this call repeated an earlier one). */
  replayed: Count,
});
export type SentRows = z.infer<typeof SentRows>;

export interface SendRowsOptions {
  /** Remarks for the operator (stderr): retries. */
  note(line: string): void;
  /** Default SEND_BODY_LIMIT; smaller in tests. */
  readonly maxBatchBytes?: number;
  /** Waits between attempts; tests pass one that does not sleep. */
  sleep?(ms: number): Promise<void>;
}

/**
 * Sends an agent's rows to the send key's sink the way `sink send` does: packed in order into
 * bodies of at most 16 MiB, each batch's Idempotency-Key depending only on the call (`batchId`:
 * the body's SHA-256, or the agent's `batch_id` and `-2`, `-3`, ...), so a repeated call is
 * replayed from the intake's ledger and never stored twice; 429, 5xx and batch_in_progress are
 * retried after Retry-After (or the ladder) within RETRY_BUDGET_SECONDS.
 */
export async function sendRows(target: SendTarget, input: SendRowsInput, options: SendRowsOptions): Promise<SentRows> {
  const sent: SentBatch[] = [];
  const batches = packBatches(inputRows(input.rows), {
    maxBatchBytes: options.maxBatchBytes ?? SEND_BODY_LIMIT,
    ...(input.batch_id === undefined ? {} : { batchId: input.batch_id }),
  });
  for await (const batch of batches) {
    let waited = 0;
    try {
      const { result, replay } = await sendBatch(target, batch, {
        onRetry: (notice) => {
          waited += notice.waitSeconds;
          if (waited > RETRY_BUDGET_SECONDS) {
            const { code, message } = detailOf(notice.failure);
            throw toolRefusal(code, `${message}; retry in ${notice.waitSeconds} s`, 'unavailable');
          }
          options.note(`send_rows: batch ${batch.id}: ${notice.reason}; retrying in ${notice.waitSeconds} s (attempt ${notice.attempt + 1})`);
        },
        ...(options.sleep ? { sleep: options.sleep } : {}),
      });
      const { accepted, rejected, reasons, received_at } = result;
      sent.push({ batch_id: batch.id, rows: batch.rows, body_bytes: batch.body.length, replay, accepted, rejected, reasons, received_at });
    } catch (error) {
      throw stoppedAt(error, batch, sent, input);
    }
  }
  return {
    sink_id: sinkIdOfTarget(target),
    batches: sent,
    accepted: sent.reduce((sum, b) => sum + b.accepted, 0),
    rejected: sent.reduce((sum, b) => sum + b.rejected, 0),
    replayed: sent.filter((b) => b.replay).length,
  };
}

async function* inputRows(rows: readonly Record<string, unknown>[]): AsyncGenerator<InputRow> {
  for (const [i, row] of rows.entries()) yield { bytes: Buffer.from(JSON.stringify(row)), index: i + 1, line: i + 1 };
}

/** A failed batch, keeping its code: what was stored before it, and that calling again is safe. */
function stoppedAt(error: unknown, batch: Batch, sent: readonly SentBatch[], input: SendRowsInput): unknown {
  if (!(error instanceof CliError)) return error;
  const { code, message } = detailOf(error);
  const before = sent.length === 0 ? 'nothing was stored' : `${plural(sent.length, 'earlier batch', 'earlier batches')} of this call ${sent.length === 1 ? 'was' : 'were'} stored`;
  const again = error.kind === 'unavailable' ? `; call send_rows again with the same rows${input.batch_id === undefined ? '' : ' and batch_id'}: stored batches are replayed, never stored twice` : '';
  return toolRefusal(code, `batch ${batch.id} (rows ${batch.firstRow} to ${batch.firstRow + batch.rows - 1}): ${message}; ${before}${again}`, error.kind);
}
