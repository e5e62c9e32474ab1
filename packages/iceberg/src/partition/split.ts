import { type Data, RecordBatch, type Struct, Table, Type } from 'apache-arrow';
import { takeRows } from '../writer/arrow-take.ts';
import { read128 } from '../writer/stats.ts';
import { PARQUET_FIELD_ID } from '../writer/type-table.ts';
import type { BoundPartitionField, BoundPartitionSpec } from './bound-spec.ts';
import { applyTransform, type PartitionValue } from './transforms.ts';
import { fromAvroValue, humanString, toAvroValue } from './values.ts';

/** The rows of one partition: their tuple, as the manifest records it and as a path. */
export interface PartitionedRows {
  /** By partition field, in spec order. */
  values: PartitionValue[];
  /** The manifest's partition record (Avro field names and forms). */
  record: Record<string, unknown>;
  /** `name=value/…`, the directory under `data/` (Java's partitionToPath). */
  path: string;
  table: Table;
}

function fieldId(field: { metadata: Map<string, string> }): number {
  return Number(field.metadata.get(PARQUET_FIELD_ID));
}

/** Reads the source value of a row, null when it or any struct above it is null. */
type Reader = (row: number) => PartitionValue;

function isNull(data: Data, row: number): boolean {
  if (data.nullCount === 0 || !data.nullBitmap) return false;
  const at = data.offset + row;
  return ((data.nullBitmap[at >> 3] as number) & (1 << (at & 7))) === 0;
}

function leafReader(data: Data): Reader {
  const at = (row: number) => data.offset + row;
  switch (data.typeId) {
    case Type.Bool:
      return (row) => (((data.values as Uint8Array)[at(row) >> 3]! >> (at(row) & 7)) & 1) === 1;
    case Type.Utf8:
    case Type.Binary: {
      const decode = data.typeId === Type.Utf8;
      return (row) => {
        const offsets = data.valueOffsets as Int32Array;
        const bytes = (data.values as Uint8Array).subarray(offsets[at(row)]!, offsets[at(row) + 1]!);
        return decode ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8') : bytes;
      };
    }
    case Type.Decimal:
      return (row) => read128(data.values as Uint32Array, 4 * at(row));
    case Type.FixedSizeBinary: {
      const width = (data.type as unknown as { byteWidth: number }).byteWidth;
      return (row) => (data.values as Uint8Array).subarray(at(row) * width, (at(row) + 1) * width);
    }
    default:
      // int, date (days), float, double as numbers; long, time, timestamps (µs) as bigint.
      return (row) => (data.values as ArrayLike<number | bigint>)[at(row)] as number | bigint;
  }
}

/** The reader of a partition source in one record batch, following its struct path. */
function sourceReader(batch: Data<Struct>, field: BoundPartitionField): Reader {
  const chain: Data[] = [];
  let node: Data = batch;
  for (const id of field.sourcePath) {
    const index = (node.type as Struct).children.findIndex((f) => fieldId(f) === id);
    if (index < 0) return () => null;
    node = node.children[index] as Data;
    chain.push(node);
  }
  if (chain.length === 0) return () => null;
  const leaf = leafReader(node);
  return (row) => (chain.some((d) => isNull(d, row)) ? null : leaf(row));
}

function keyOf(values: readonly PartitionValue[]): string {
  return JSON.stringify(values, (_, v: unknown) =>
    typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v,
  );
}

interface Group {
  values: PartitionValue[];
  /** Row indices per record batch of the table. */
  rows: number[][];
  count: number;
}

/**
 * Splits rows by the partition tuple of `spec`, keeping the order of rows within each
 * partition. Rows are only copied when the table spans more than one partition.
 */
export function splitByPartition(table: Table, spec: BoundPartitionSpec): PartitionedRows[] {
  const groups = new Map<string, Group>();
  table.batches.forEach((batch, b) => {
    const readers = spec.fields.map((f) => sourceReader(batch.data, f));
    for (let row = 0; row < batch.numRows; row++) {
      const values = spec.fields.map((f, i) => applyTransform(f.transform, f.source, readers[i]!(row)));
      const key = keyOf(values);
      let group = groups.get(key);
      if (group === undefined) {
        group = { values, rows: table.batches.map(() => []), count: 0 };
        groups.set(key, group);
      }
      group.rows[b]!.push(row);
      group.count++;
    }
  });
  return [...groups.values()].map((group) => ({
    values: group.values,
    record: Object.fromEntries(spec.fields.map((f, i) => [f.avroName, toAvroValue(f.result, group.values[i] ?? null)])),
    path: partitionPath(spec, group.values),
    table: group.count === table.numRows ? table : takeTable(table, group.rows),
  }));
}

/** `name=value/…`, the directory under `data/` (Java's partitionToPath). */
function partitionPath(spec: BoundPartitionSpec, values: readonly PartitionValue[]): string {
  return spec.fields.map((f, i) => `${encodeURIComponent(f.name)}=${encodeURIComponent(humanString(f, values[i] ?? null))}`).join('/');
}

/** A manifest's partition record (Avro form) of `spec` as a partition of rows: its record and path. */
export function partitionOfRecord(spec: BoundPartitionSpec, record: Record<string, unknown>): Pick<PartitionedRows, 'record' | 'path'> {
  return { record, path: partitionPath(spec, spec.fields.map((f) => fromAvroValue(f.result, record[f.avroName]))) };
}

function takeTable(table: Table, rows: readonly number[][]): Table {
  const batches = table.batches.flatMap((batch, b) => {
    const indices = rows[b] as number[];
    return indices.length === 0 ? [] : [new RecordBatch(table.schema, takeRows(batch.data, Int32Array.from(indices)) as Data<Struct>)];
  });
  return new Table(batches);
}
