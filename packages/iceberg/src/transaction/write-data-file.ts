import type { Table } from 'apache-arrow';
import type { FileIO } from '../io/file-io.ts';
import type { PartitionedRows } from '../partition/split.ts';
import type { DataFile } from '../writer/data-file.ts';
import { writeParquet, type ParquetWriteOptions } from '../writer/parquet.ts';
import { dataFileLocation } from './locations.ts';

export interface WriteDataFileOptions {
  io: FileIO;
  /** The table's `location` from its metadata. */
  tableLocation: string;
  /** Rows with field ids on every Arrow field, e.g. from `compileRowConverter(...).finish()`. */
  table: Table;
  /** Pass `schema` to get bounds and NaN counts in the metrics. */
  parquet?: ParquetWriteOptions;
  /** The rows' partition under the table's default spec, from `splitByPartition`. */
  partition?: Pick<PartitionedRows, 'record' | 'path'>;
}

/** Writes an Arrow table as one Parquet data file under `<location>/data/` and describes it for a manifest. */
export async function writeDataFile(options: WriteDataFileOptions): Promise<DataFile> {
  const location = dataFileLocation(options.tableLocation, options.partition?.path);
  const written = writeParquet(options.table, options.parquet);
  await options.io.put(location, written.bytes);
  return {
    filePath: location,
    fileSizeInBytes: written.bytes.byteLength,
    recordCount: written.recordCount,
    metrics: written.metrics,
    ...(options.partition ? { partition: options.partition.record } : {}),
  };
}
