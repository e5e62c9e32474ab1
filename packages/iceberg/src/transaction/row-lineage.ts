import { type Data, Int64, makeData, RecordBatch, type Schema as ArrowSchema, Struct, vectorFromArray } from 'apache-arrow';
import type { TableMetadata } from '../spec/metadata.ts';
import type { Schema } from '../spec/schema.ts';
import type { NestedField } from '../spec/types.ts';
import { assignFirstRowIds, type ManifestFile } from '../writer/manifest-list.ts';
import { PARQUET_FIELD_ID } from '../writer/type-table.ts';

/** The reserved field ids of v3 row lineage (spec: "Reserved Field IDs"). */
export const ROW_ID_FIELD_ID = 2147483540;
export const LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID = 2147483539;

const LINEAGE_IDS: ReadonlySet<string> = new Set([String(ROW_ID_FIELD_ID), String(LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID)]);

/** The two columns as a writer that moves rows writes them: optional longs, after the table's columns. */
const LINEAGE_FIELDS: readonly NestedField[] = [
  { id: ROW_ID_FIELD_ID, name: '_row_id', required: false, type: { kind: 'long' } },
  { id: LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID, name: '_last_updated_sequence_number', required: false, type: { kind: 'long' } },
];

/** The schema a file of moved rows is written with: the table's, then the row lineage columns. */
export function withLineageFields(schema: Schema): Schema {
  return { ...schema, fields: [...schema.fields, ...LINEAGE_FIELDS] };
}

/** A file's Arrow schema without its row lineage columns (a file rewritten before has them). */
export function withoutLineage(schema: ArrowSchema): ArrowSchema {
  return schema.select(schema.fields.filter((f) => !LINEAGE_IDS.has(f.metadata.get(PARQUET_FIELD_ID) ?? '')).map((f) => f.name));
}

/** What a data file's rows inherit when their lineage columns are absent or null. */
export interface InheritedLineage {
  /** The data file's `first_row_id`; null for a file that has none (its rows keep null ids). */
  firstRowId: bigint | null;
  /** The data sequence number of the file's manifest entry. */
  sequenceNumber: bigint;
}

/**
 * Splits one source file's batches, in file order, into the table's columns and the row
 * lineage each row carries: its own `_row_id` / `_last_updated_sequence_number` where the file
 * has a non-null one, else the inherited `first_row_id + position` and the file's data sequence
 * number (spec: "Row Lineage", rows moved to a new file keep both, written explicitly). Without
 * `inherited` (a table before v3) the lineage columns are only dropped.
 */
export class LineageReader {
  private position = 0n;
  private readonly rowIdIndex: number;
  private readonly sequenceIndex: number;
  private readonly dataIndices: number[];

  constructor(
    fileSchema: ArrowSchema,
    private readonly inherited: InheritedLineage | undefined,
  ) {
    const ids = fileSchema.fields.map((f) => f.metadata.get(PARQUET_FIELD_ID));
    this.rowIdIndex = ids.indexOf(String(ROW_ID_FIELD_ID));
    this.sequenceIndex = ids.indexOf(String(LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID));
    this.dataIndices = ids.flatMap((id, i) => (LINEAGE_IDS.has(id ?? '') ? [] : [i]));
  }

  /** The batch's table columns, and its rows' lineage as two long columns (none without `inherited`). */
  split(batch: RecordBatch): { rows: RecordBatch; lineage: Data<Int64>[] } {
    const rows = this.dataIndices.length === batch.numCols ? batch : batch.selectAt(this.dataIndices);
    if (this.inherited === undefined) return { rows, lineage: [] };
    const ownRowIds = this.rowIdIndex < 0 ? null : batch.getChildAt(this.rowIdIndex);
    const ownSequences = this.sequenceIndex < 0 ? null : batch.getChildAt(this.sequenceIndex);
    const { firstRowId, sequenceNumber } = this.inherited;
    const rowIds = new Array<bigint | null>(batch.numRows);
    const sequences = new Array<bigint>(batch.numRows);
    for (let i = 0; i < batch.numRows; i++) {
      const own = ownRowIds?.get(i) as bigint | null | undefined;
      rowIds[i] = own ?? (firstRowId === null ? null : firstRowId + this.position + BigInt(i));
      sequences[i] = (ownSequences?.get(i) as bigint | null | undefined) ?? sequenceNumber;
    }
    this.position += BigInt(batch.numRows);
    return {
      rows,
      lineage: [vectorFromArray(rowIds, new Int64()).data[0]!, vectorFromArray(sequences, new Int64()).data[0]!],
    };
  }
}

/** `batch` (the table's columns) with the lineage columns after them, as `schema` (the table's schema `withLineageFields`) has them. */
export function appendLineage(batch: RecordBatch, lineage: readonly Data<Int64>[], schema: ArrowSchema): RecordBatch {
  return new RecordBatch(
    schema,
    makeData({ type: new Struct(schema.fields), length: batch.numRows, nullCount: 0, children: [...batch.data.children, ...lineage] }),
  );
}

/**
 * A v3 snapshot's row ids: its `first-row-id` is the table's `next-row-id` (reread on every
 * attempt), and every data manifest without a first row id gets one from there on, as Java's
 * manifest list writer assigns them (for a rewrite too: its new and rewritten manifests take
 * fresh ranges, while their rows keep the ids written in them or in their entries).
 */
export function snapshotRowIds(metadata: TableMetadata, manifests: readonly ManifestFile[]): { firstRowId: bigint; addedRows: bigint; manifests: ManifestFile[] } {
  const next = metadata['next-row-id'];
  const firstRowId = typeof next === 'bigint' ? next : BigInt(typeof next === 'number' ? next : 0);
  const assigned = assignFirstRowIds(manifests, firstRowId);
  return { firstRowId, addedRows: assigned.addedRows, manifests: assigned.manifests };
}
