import type { Data, Table } from 'apache-arrow';
import type { FileMetaData } from 'hyparquet';
import type { Schema } from '../spec/schema.ts';
import { isPrimitive } from '../spec/types.ts';
import type { DataFileMetrics } from './data-file.ts';
import { PARQUET_FIELD_ID, ruleFor } from './type-table.ts';

/** The metrics that come from the rows (counts and bounds), not from the file's layout. */
export interface DataMetrics {
  valueCounts: Map<number, bigint>;
  nullValueCounts: Map<number, bigint>;
  nanValueCounts: Map<number, bigint>;
  lowerBounds: Map<number, Uint8Array>;
  upperBounds: Map<number, Uint8Array>;
}

function emptyDataMetrics(): DataMetrics {
  return { valueCounts: new Map(), nullValueCounts: new Map(), nanValueCounts: new Map(), lowerBounds: new Map(), upperBounds: new Map() };
}

/**
 * Manifest metrics for one Parquet file, every value exact:
 * - column sizes for every leaf column, from the Parquet footer;
 * - value, null and NaN counts and bounds for top-level primitive columns, from the Arrow data
 *   that was written. Nested fields get none (allowed: missing metrics only cost pruning).
 */
export function fileMetrics(table: Table, footer: FileMetaData, schema: Schema | undefined): DataFileMetrics {
  return { ...footerMetrics(footer), ...dataMetrics(table, schema) };
}

/** Column sizes and split offsets, from the footer. */
export function footerMetrics(footer: FileMetaData): Pick<DataFileMetrics, 'columnSizes' | 'splitOffsets'> {
  const columnSizes = new Map<number, bigint>();
  const leafIds = leafFieldIds(footer);
  for (const group of footer.row_groups) {
    group.columns.forEach((chunk, i) => {
      const id = leafIds[i];
      const size = chunk.meta_data?.total_compressed_size;
      if (id !== undefined && size !== undefined) columnSizes.set(id, (columnSizes.get(id) ?? 0n) + size);
    });
  }
  const splitOffsets = rowGroupOffsets(footer);
  return splitOffsets === undefined ? { columnSizes } : { columnSizes, splitOffsets };
}

/** Counts and bounds of the top-level primitive columns (bounds and NaN counts need the schema). */
export function dataMetrics(table: Table, schema: Schema | undefined): DataMetrics {
  const metrics = emptyDataMetrics();
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
  return metrics;
}

/**
 * The data metrics of rows written as parts (e.g. row groups written apart), equal to those of
 * all the rows at once: counts add up; the lower bound is the least of the parts', the upper
 * the greatest, compared as the column's type orders them. A part that has values but no upper
 * bound (a string whose bound cannot be cut) leaves the whole without one. Bounds need the
 * schema: without it, only counts are merged.
 */
export function mergeDataMetrics(parts: readonly DataMetrics[], schema: Schema | undefined): DataMetrics {
  const merged = emptyDataMetrics();
  const add = (target: Map<number, bigint>, source: ReadonlyMap<number, bigint>) => {
    for (const [id, n] of source) target.set(id, (target.get(id) ?? 0n) + n);
  };
  for (const part of parts) {
    add(merged.valueCounts, part.valueCounts);
    add(merged.nullValueCounts, part.nullValueCounts);
    add(merged.nanValueCounts, part.nanValueCounts);
  }
  for (const field of schema?.fields ?? []) {
    if (!isPrimitive(field.type)) continue;
    const order = ruleFor(field.type).boundOrder;
    if (order === undefined) continue;
    let lower: Uint8Array | undefined;
    let upper: Uint8Array | undefined;
    let noUpper = false;
    for (const part of parts) {
      const partLower = part.lowerBounds.get(field.id);
      const partUpper = part.upperBounds.get(field.id);
      if (partLower !== undefined && (lower === undefined || order(partLower, lower) < 0)) lower = partLower;
      if (partUpper !== undefined && (upper === undefined || order(partUpper, upper) > 0)) upper = partUpper;
      if (partLower !== undefined && partUpper === undefined) noUpper = true;
    }
    if (lower !== undefined) merged.lowerBounds.set(field.id, lower);
    if (upper !== undefined && !noUpper) merged.upperBounds.set(field.id, upper);
  }
  return merged;
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
