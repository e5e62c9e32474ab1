import type { FileIO } from '../io/file-io.ts';
import type { PartitionedRows } from '../partition/split.ts';
import type { DataFile } from '../writer/data-file.ts';
import type { WrittenParquet } from '../writer/parquet.ts';
import { dataFileLocation } from './locations.ts';

export interface PutDataFileOptions {
  io: FileIO;
  /** The table's `location` from its metadata. */
  tableLocation: string;
  /** A Parquet file already written, e.g. by `NdjsonConverterPool.writeParquet`. */
  written: WrittenParquet;
  /** The rows' partition under the spec the file is added with; the file goes in its directory. */
  partition?: Pick<PartitionedRows, 'record' | 'path'>;
}

/** Uploads a written Parquet file as a data file under `<location>/data/` and describes it for a manifest. */
export async function putDataFile(options: PutDataFileOptions): Promise<DataFile> {
  const location = dataFileLocation(options.tableLocation, options.partition?.path);
  const { bytes, recordCount, metrics } = options.written;
  await options.io.put(location, bytes);
  return { filePath: location, fileSizeInBytes: bytes.byteLength, recordCount, metrics, ...(options.partition ? { partition: options.partition.record } : {}) };
}
