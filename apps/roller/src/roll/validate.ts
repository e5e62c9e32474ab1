import { compileRowConverter, parseJsonRow, schemaFromJson, type SchemaJson } from '@tablemere/iceberg';
import { Table } from 'apache-arrow';
import type { IntakeBatch } from './read-batches.ts';
import { type RejectsReason, rejectLine, unreadableLines } from './rejects.ts';

/** The column every sink's table gets at its first roll, filled from the intake's received time. */
export const INGEST_TS = '__ingest_ts';

export interface BatchOutcome {
  id: string;
  /** Rows taken into the data file. */
  rows: number;
  /** Rows written to the batch's rejects file. */
  rejected: number;
  rejectLines: string[];
  reasons: Partial<Record<RejectsReason, number>>;
}

export interface Validation {
  /** The schema the rows were validated against (and the data file is written with). */
  schemaId: number;
  /** The taken rows with Iceberg field ids; undefined when no row was taken. */
  table: Table | undefined;
  rows: number;
  rejected: number;
  /** In the order the batches were given. */
  batches: BatchOutcome[];
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The lines of an NDJSON object, without blank ones (a trailing newline, CRLF endings). */
function lines(text: string): string[] {
  return text.split('\n').filter((line) => line.trim() !== '');
}

/**
 * Step 5, validate: every row of every batch against the table's current schema, one by one.
 * A row that does not fit is rejected alone with its reason; a batch that does not parse is
 * rejected whole as batch_unreadable, and the others go on. `__ingest_ts`, when the table has
 * it as timestamptz, is each batch's received time, never the roller's clock.
 */
export function validateBatches(schemaJson: SchemaJson, batches: readonly IntakeBatch[]): Validation {
  const schema = schemaFromJson(schemaJson);
  const stamped = schema.fields.some((f) => f.name === INGEST_TS && f.type.kind === 'timestamptz');
  const converter = compileRowConverter(schema, stamped ? { injected: [INGEST_TS] } : {});
  const chunks: Table[] = [];
  const outcomes: BatchOutcome[] = [];

  for (const batch of batches) {
    const outcome: BatchOutcome = { id: batch.id, rows: 0, rejected: 0, rejectLines: [], reasons: {} };
    outcomes.push(outcome);
    const unreadable = (rejects: string[]) => {
      outcome.rows = 0;
      outcome.rejectLines = rejects;
      outcome.rejected = rejects.length;
      outcome.reasons = { batch_unreadable: rejects.length };
    };
    let text: string;
    try {
      text = utf8.decode(batch.body);
    } catch {
      unreadable(unreadableLines(batch.id, { bytes: batch.body }, 'the batch is not UTF-8 text; row_base64 holds its bytes'));
      continue;
    }
    if (stamped) converter.setInjected(INGEST_TS, batch.received);
    const rows = lines(text);
    const before = converter.rowCount;
    for (const [index, line] of rows.entries()) {
      let reject;
      try {
        reject = converter.append(parseJsonRow(line));
      } catch (error) {
        if (!(error instanceof SyntaxError)) throw error;
        // Keep the rows of earlier batches, drop this batch's: finish() empties the converter.
        const kept = converter.finish().slice(0, before);
        if (kept.numRows > 0) chunks.push(kept);
        unreadable(unreadableLines(batch.id, { lines: rows }, `line ${index + 1} of the batch is not JSON (${error.message}); the whole batch is rejected`));
        break;
      }
      if (reject === null) {
        outcome.rows++;
      } else {
        outcome.rejected++;
        outcome.reasons[reject.reason] = (outcome.reasons[reject.reason] ?? 0) + 1;
        outcome.rejectLines.push(rejectLine(batch.id, line, reject));
      }
    }
  }
  if (converter.rowCount > 0) chunks.push(converter.finish());
  const rows = outcomes.reduce((sum, b) => sum + b.rows, 0);
  return {
    schemaId: schema.schemaId,
    table: rows === 0 ? undefined : chunks.length === 1 ? chunks[0] : new Table(chunks.flatMap((c) => c.batches)),
    rows,
    rejected: outcomes.reduce((sum, b) => sum + b.rejected, 0),
    batches: outcomes,
  };
}
