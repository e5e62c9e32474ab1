import { type RecordBatch, Table } from 'apache-arrow';
import { IcebergError } from '../errors.ts';
import type { FileIO } from '../io/file-io.ts';
import { conformerFor } from '../writer/arrow-conform.ts';
import type { DataFile } from '../writer/data-file.ts';
import { joinParquetParts, type ParquetPart, writeParquetPart } from '../writer/parquet.ts';
import { parquetArrowSchema, readParquetRowGroups } from '../writer/parquet-read.ts';
import { putDataFile } from './put-data-file.ts';
import type { RewriteBin } from './rewrite-plan.ts';

/**
 * Decoded rows held before they are encoded as one part (one row group of the output). Bounds
 * the decoded data in memory, whatever the target size; parts hold encoded bytes only.
 */
export const PART_DECODED_BYTES = 64 * 1024 * 1024;

/**
 * Reads a bin's files one by one, a row group at a time, and writes their rows, in order and
 * value for value, as one Parquet data file under the bin's schema; the metrics are computed
 * from the rows. Every file must give as many rows as its manifest entry says.
 */
export async function rewriteBin(io: FileIO, tableLocation: string, bin: RewriteBin): Promise<DataFile> {
  const parts: ParquetPart[] = [];
  let pending: RecordBatch[] = [];
  let pendingBytes = 0;
  const flush = () => {
    if (pending.length === 0) return;
    parts.push(writeParquetPart(new Table(bin.arrowSchema, pending), { schema: bin.schema }));
    pending = [];
    pendingBytes = 0;
  };
  for (const file of bin.files) {
    const bytes = await io.get(file.file_path);
    const conformer = conformerFor(parquetArrowSchema(bytes), bin.arrowSchema);
    if (conformer === null) throw new IcebergError('validation_failed', `${file.file_path} no longer has the schema it was planned with`);
    let rows = 0n;
    for (const group of readParquetRowGroups(bytes)) {
      for (const batch of group) {
        const conformed = conformer.conform(batch);
        rows += BigInt(conformed.numRows);
        pending.push(conformed);
        pendingBytes += conformed.data.byteLength;
      }
      if (pendingBytes >= PART_DECODED_BYTES) flush();
    }
    if (rows !== file.record_count) {
      throw new IcebergError('validation_failed', `${file.file_path} holds ${rows} rows, its manifest entry says ${file.record_count}`);
    }
  }
  flush();
  return putDataFile({ io, tableLocation, written: joinParquetParts(parts, bin.schema) });
}
