import { type RecordBatch, type Schema as ArrowSchema, tableFromIPC } from 'apache-arrow';
import { parquetMetadata } from 'hyparquet';
import { readParquet, readSchema } from 'parquet-wasm';

/**
 * The Arrow schema parquet-wasm reads a Parquet file with: the file's own Arrow schema when the
 * writer stored one (this package, PyIceberg), else the one derived from the Parquet types.
 * Every field carries its Parquet field id as `PARQUET:field_id`, nested fields included.
 */
export function parquetArrowSchema(bytes: Uint8Array): ArrowSchema {
  return tableFromIPC(readSchema(bytes).intoIPCStream()).schema;
}

/**
 * The rows of a Parquet file, one row group at a time, so that only one row group is ever
 * decoded at once. Each yields the row group as Arrow record batches.
 */
export function* readParquetRowGroups(bytes: Uint8Array): Generator<RecordBatch[]> {
  const groups = parquetMetadata(bytes).row_groups;
  for (let i = 0; i < groups.length; i++) {
    const rows = Number((groups[i] as { num_rows: bigint }).num_rows);
    if (rows === 0) continue;
    yield tableFromIPC(readParquet(bytes, { rowGroups: [i], batchSize: rows }).intoIPCStream()).batches;
  }
}
