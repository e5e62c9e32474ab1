import { type Table, tableToIPC } from 'apache-arrow';
import { parquetMetadata } from 'hyparquet';
import { Compression, Table as WasmTable, WriterPropertiesBuilder, writeParquet as writeWasmParquet } from 'parquet-wasm';
import type { Schema } from '../spec/schema.ts';
import type { DataFileMetrics } from './data-file.ts';
import { fileMetrics } from './metrics.ts';

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
  let builder = new WriterPropertiesBuilder().setCompression(CODECS[options.compression ?? 'zstd']);
  if (options.rowGroupSize !== undefined) builder = builder.setMaxRowGroupSize(options.rowGroupSize);
  // Both calls take ownership of their arguments' wasm memory and free it.
  const bytes = writeWasmParquet(WasmTable.fromIPCStream(tableToIPC(table, 'stream')), builder.build());
  return {
    bytes,
    recordCount: table.numRows,
    metrics: fileMetrics(table, parquetMetadata(bytes), options.schema),
  };
}
