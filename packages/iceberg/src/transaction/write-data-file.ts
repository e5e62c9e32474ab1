import type { Table } from 'apache-arrow';
import type { FileIO } from '../io/file-io.ts';
import type { PartitionedRows } from '../partition/split.ts';
import type { DataFile } from '../writer/data-file.ts';
import { writeParquet, type ParquetWriteOptions } from '../writer/parquet.ts';
import { putDataFile } from './put-data-file.ts';

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
  const written = writeParquet(options.table, options.parquet);
  return putDataFile({ io: options.io, tableLocation: options.tableLocation, written, ...(options.partition ? { partition: options.partition } : {}) });
}
