import type { Data, Table } from 'apache-arrow';
import type { FileMetaData } from 'hyparquet';
import type { Schema } from '../spec/schema.ts';
import { isPrimitive } from '../spec/types.ts';
import type { DataFileMetrics } from './data-file.ts';
import { PARQUET_FIELD_ID, ruleFor } from './type-table.ts';

/**
 * Manifest metrics for one Parquet file, every value exact:
 * - column sizes for every leaf column, from the Parquet footer;
 * - value, null and NaN counts and bounds for top-level primitive columns, from the Arrow data
 *   that was written. Nested fields get none (allowed: missing metrics only cost pruning).
 */
export function fileMetrics(table: Table, footer: FileMetaData, schema: Schema | undefined): DataFileMetrics {
  const metrics = {
    columnSizes: new Map<number, bigint>(),
    valueCounts: new Map<number, bigint>(),
    nullValueCounts: new Map<number, bigint>(),
    nanValueCounts: new Map<number, bigint>(),
    lowerBounds: new Map<number, Uint8Array>(),
    upperBounds: new Map<number, Uint8Array>(),
  };

  const leafIds = leafFieldIds(footer);
  for (const group of footer.row_groups) {
    group.columns.forEach((chunk, i) => {
      const id = leafIds[i];
      const size = chunk.meta_data?.total_compressed_size;
      if (id !== undefined && size !== undefined) metrics.columnSizes.set(id, (metrics.columnSizes.get(id) ?? 0n) + size);
    });
  }

  const types = new Map(schema?.fields.map((field) => [field.id, field.type]));
  table.schema.fields.forEach((field, i) => {
    const id = Number(field.metadata.get(PARQUET_FIELD_ID));
    const vector = table.getChildAt(i);
    if (!Number.isInteger(id) || vector === null) return;
    const type = types.get(id);
    // Counts need the column to be a leaf; without the schema, trust the Arrow type.
    if (type === undefined ? field.type.children?.length : !isPrimitive(type)) return;
    metrics.valueCounts.set(id, BigInt(vector.length));
    metrics.nullValueCounts.set(id, BigInt(vector.nullCount));
    if (type === undefined || !isPrimitive(type)) return;
    const stats = ruleFor(type).stats?.(vector.data as readonly Data[]);
    if (stats === undefined) return;
    if (stats.nanCount !== undefined) metrics.nanValueCounts.set(id, BigInt(stats.nanCount));
    if (stats.lower !== undefined) metrics.lowerBounds.set(id, stats.lower);
    if (stats.upper !== undefined) metrics.upperBounds.set(id, stats.upper);
  });
  const splitOffsets = rowGroupOffsets(footer);
  return splitOffsets === undefined ? metrics : { ...metrics, splitOffsets };
}

/** Where each row group starts (its first column chunk's first page), if the footer says so for all. */
function rowGroupOffsets(footer: FileMetaData): bigint[] | undefined {
  const offsets: bigint[] = [];
  for (const group of footer.row_groups) {
    const first = group.columns[0]?.meta_data;
    const offset = first?.dictionary_page_offset ?? first?.data_page_offset;
    if (offset === undefined) return undefined;
    offsets.push(offset);
  }
  return offsets;
}

/** The field id of each leaf column, in column chunk order (depth-first over the schema). */
function leafFieldIds(footer: FileMetaData): Array<number | undefined> {
  const ids: Array<number | undefined> = [];
  // schema[0] is the root; elements with children are groups, the rest are leaves.
  for (const element of footer.schema.slice(1)) {
    if (!element.num_children) ids.push(element.field_id);
  }
  return ids;
}
