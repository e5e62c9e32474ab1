import { compileRowConverter, type RowConverter, type RowReject, schemaFromJson, type SchemaJson } from '@tablemere/iceberg';
import type { Table } from 'apache-arrow';
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
  /** With new-field options: the rows rejected as unknown_field, as JSON text, in roll order. */
  unknownRows: string[];
}

/** How a sink with `unknown_fields: add_columns` validates. */
export interface NewFieldOptions {
  /** Columns this roll added, as reject paths name them (`address.city`): a type_mismatch under one says so. */
  added: ReadonlyArray<{ path: string; type: string }>;
}

/** The lines of an NDJSON object, without blank ones (a trailing newline). */
function lines(text: string): string[] {
  return text.split('\n').filter((line) => line.trim() !== '');
}

/**
 * Step 5, validate: every row of every batch against the table's current schema, one by one.
 * A row that does not fit is rejected alone with its reason; a batch that does not parse is
 * rejected whole as batch_unreadable, and the others go on. `__ingest_ts`, when the table has
 * it as timestamptz, is each batch's received time, never the roller's clock. Batches are
 * added one at a time, as they are read.
 */
export class BatchValidator {
  private readonly schemaId: number;
  private readonly stamped: boolean;
  private readonly converter: RowConverter;
  private readonly outcomes: BatchOutcome[] = [];
  private readonly unknownRows: string[] = [];

  /**
   * With `newFields` (a sink adding columns), a null under an unknown key carries no data and
   * the row is taken, and the rows rejected as unknown_field are kept for planning columns.
   */
  constructor(
    schemaJson: SchemaJson,
    private readonly newFields?: NewFieldOptions,
  ) {
    const schema = schemaFromJson(schemaJson);
    this.schemaId = schema.schemaId;
    this.stamped = schema.fields.some((f) => f.name === INGEST_TS && f.type.kind === 'timestamptz');
    this.converter = compileRowConverter(schema, {
      ...(this.stamped ? { injected: [INGEST_TS] } : {}),
      ...(newFields ? { unknownNulls: 'skip' as const } : {}),
    });
  }

  add(batch: IntakeBatch): BatchOutcome {
    const outcome: BatchOutcome = { id: batch.id, rows: 0, rejected: 0, rejectLines: [], reasons: {} };
    this.outcomes.push(outcome);
    if (batch.unreadable !== undefined) {
      const rejects = unreadableLines(batch.id, { bytes: batch.body }, batch.unreadable);
      Object.assign(outcome, { rejectLines: rejects, rejected: rejects.length, reasons: { batch_unreadable: rejects.length } });
      return outcome;
    }
    if (this.stamped) this.converter.setInjected(INGEST_TS, batch.received);
    const result = this.converter.appendNdjson(batch.body);
    if (!result.ok) {
      // Nothing of the batch was kept; every line of it goes to its rejects file.
      const rejects =
        result.error.kind === 'not_utf8'
          ? unreadableLines(batch.id, { bytes: batch.body }, 'the batch is not UTF-8 text; row_base64 holds its bytes')
          : unreadableLines(batch.id, { lines: lines(batch.body.toString('utf8')) }, `${result.error.message}; the whole batch is rejected`);
      outcome.rejectLines = rejects;
      outcome.rejected = rejects.length;
      outcome.reasons = { batch_unreadable: rejects.length };
      return outcome;
    }
    outcome.rows = result.rows;
    for (const { text, reject: found } of result.rejects) {
      const reject = this.newFields ? explainNewField(found, this.newFields) : found;
      // Their fields may become columns.
      if (reject.reason === 'unknown_field' && this.newFields) this.unknownRows.push(text);
      outcome.rejected++;
      outcome.reasons[reject.reason] = (outcome.reasons[reject.reason] ?? 0) + 1;
      outcome.rejectLines.push(rejectLine(batch.id, text, reject));
    }
    return outcome;
  }

  finish(): Validation {
    const { outcomes } = this;
    const rows = outcomes.reduce((sum, b) => sum + b.rows, 0);
    const table = this.converter.finish();
    return {
      schemaId: this.schemaId,
      table: rows === 0 ? undefined : table,
      rows,
      rejected: outcomes.reduce((sum, b) => sum + b.rejected, 0),
      batches: outcomes,
      unknownRows: this.unknownRows,
    };
  }
}

/**
 * A reject of a sink adding columns, said in its terms: a value that does not fit a column this
 * roll added names where the column's type came from; a field still unknown had no value to
 * type it.
 */
function explainNewField(reject: RowReject, options: NewFieldOptions): RowReject {
  if (reject.reason === 'unknown_field' && reject.field !== INGEST_TS) {
    return { ...reject, message: `${reject.message}; add_columns adds a field once its values give it one type (null, [] or {} alone do not) and its name can be a column's` };
  }
  if (reject.reason !== 'type_mismatch') return reject;
  const path = reject.field.replace(/\[\d+\]/g, '');
  const column = options.added.find((c) => path === c.path || path.startsWith(`${c.path}.`));
  if (column === undefined) return reject;
  return { ...reject, message: `${reject.message}; this roll added ${column.path} as ${column.type}, typed from its rows (the first row's type where they disagree)` };
}

/** All batches at once: `BatchValidator` over the list. */
export function validateBatches(schemaJson: SchemaJson, batches: readonly IntakeBatch[], newFields?: NewFieldOptions): Validation {
  const validator = new BatchValidator(schemaJson, newFields);
  for (const batch of batches) validator.add(batch);
  return validator.finish();
}
