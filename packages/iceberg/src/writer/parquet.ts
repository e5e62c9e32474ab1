import { type Table, tableToIPC } from 'apache-arrow';
import { parquetMetadata } from 'hyparquet';
import { Compression, Table as WasmTable, WriterPropertiesBuilder, writeParquet as writeWasmParquet } from 'parquet-wasm';
import type { Schema } from '../spec/schema.ts';
import type { DataFileMetrics } from './data-file.ts';
import { type DataMetrics, dataMetrics, fileMetrics, footerMetrics, mergeDataMetrics } from './metrics.ts';
import { concatParquet } from './parquet-concat.ts';
import { annotateUuidColumns } from './parquet-logical-types.ts';

export type ParquetCompression = 'zstd' | 'snappy' | 'gzip' | 'lz4_raw' | 'uncompressed';

export interface ParquetWriteOptions {
  /** Default zstd. */
  compression?: ParquetCompression;
  /** The Iceberg schema the table was built for; enables bounds and NaN counts in the metrics. */
  schema?: Schema;
  /** Rows per row group (default: the writer's, about a million). */
  rowGroupSize?: number;
}

export interface WrittenParquet {
  bytes: Uint8Array;
  recordCount: number;
  metrics: DataFileMetrics;
}

const CODECS: Readonly<Record<ParquetCompression, Compression>> = {
  zstd: Compression.ZSTD,
  snappy: Compression.SNAPPY,
  gzip: Compression.GZIP,
  lz4_raw: Compression.LZ4_RAW,
  uncompressed: Compression.UNCOMPRESSED,
};

/**
 * Writes an Arrow table as one Parquet file (parquet-wasm; the Node build needs no init).
 * The Arrow fields' `PARQUET:field_id` metadata becomes the Parquet field ids, which is how
 * Iceberg readers find columns.
 */
export function writeParquet(table: Table, options: ParquetWriteOptions = {}): WrittenParquet {
  const bytes = encodeParquet(table, options);
  return {
    bytes,
    recordCount: table.numRows,
    metrics: fileMetrics(table, parquetMetadata(bytes), options.schema),
  };
}

function encodeParquet(table: Table, options: ParquetWriteOptions): Uint8Array {
  let builder = new WriterPropertiesBuilder().setCompression(CODECS[options.compression ?? 'zstd']);
  if (options.rowGroupSize !== undefined) builder = builder.setMaxRowGroupSize(options.rowGroupSize);
  for (const name of distinctColumns(table)) builder = builder.setColumnDictionaryEnabled(name, false);
  // Both calls take ownership of their arguments' wasm memory and free it.
  const bytes = writeWasmParquet(WasmTable.fromIPCStream(tableToIPC(table, 'stream')), builder.build());
  return options.schema ? annotateUuidColumns(bytes, options.schema) : bytes;
}

/** Values looked at to tell a column of all but unique values. */
const DICTIONARY_SAMPLE = 1024;

/**
 * Top-level columns whose first values are all different (ids, timestamps, coordinates). A
 * dictionary does not pay for them: the writer builds one, then falls back to plain encoding
 * once it outgrows its page, which costs time and makes a bigger file. A column of a few
 * thousand (or tens of thousands of) values repeats within the sample and keeps its dictionary.
 */
function distinctColumns(table: Table): string[] {
  const names: string[] = [];
  table.schema.fields.forEach((field, i) => {
    const vector = table.getChildAt(i);
    if (vector === null || field.type.children?.length || vector.length < DICTIONARY_SAMPLE) return;
    const seen = new Set<unknown>();
    for (let row = 0; row < vector.length && seen.size < DICTIONARY_SAMPLE; row++) {
      const value: unknown = vector.get(row);
      if (value === null) continue;
      // Only values that compare by content in a Set (not byte arrays: decimals, uuids, binary).
      if (typeof value === 'object' || typeof value === 'boolean') return;
      const size = seen.size;
      if (seen.add(value).size === size) return;
    }
    if (seen.size === DICTIONARY_SAMPLE) names.push(field.name);
  });
  return names;
}

/** Rows written as a Parquet file of their own, to be joined with others into one file. */
export interface ParquetPart {
  bytes: Uint8Array;
  recordCount: number;
  /** Counts and bounds of the part's rows. */
  metrics: DataMetrics;
}

/** Writes a part (`joinParquetParts` makes one file of parts written with the same options). */
export function writeParquetPart(table: Table, options: ParquetWriteOptions = {}): ParquetPart {
  return { bytes: encodeParquet(table, options), recordCount: table.numRows, metrics: dataMetrics(table, options.schema) };
}

/**
 * Parts written apart (e.g. on several threads) as one Parquet file, their row groups in the
 * order given, with the metrics `writeParquet` would give for all their rows (pass the same
 * schema the parts were written with).
 */
export function joinParquetParts(parts: readonly ParquetPart[], schema?: Schema): WrittenParquet {
  const bytes = concatParquet(parts.map((part) => part.bytes));
  return {
    bytes,
    recordCount: parts.reduce((sum, part) => sum + part.recordCount, 0),
    metrics: { ...footerMetrics(parquetMetadata(bytes)), ...mergeDataMetrics(parts.map((part) => part.metrics), schema) },
  };
}
