import { type RecordBatch, Table } from 'apache-arrow';
import { IcebergError } from '../errors.ts';
import type { BoundPartitionSpec } from '../partition/bound-spec.ts';
import { type PartitionedRows, splitByPartition } from '../partition/split.ts';
import type { FileIO } from '../io/file-io.ts';
import type { DataFile } from '../writer/data-file.ts';
import type { ManifestDataFile } from '../writer/manifest.ts';
import { compileRowConverter } from '../writer/row-converter.ts';
import { joinParquetParts, type ParquetPart, writeParquetPart } from '../writer/parquet.ts';
import { parquetArrowSchema, readParquetRowGroups } from '../writer/parquet-read.ts';
import { IO_WIDTH } from './bounded.ts';
import { putDataFile } from './put-data-file.ts';
import { fileConformer, type KeptFiles, type RewriteBin } from './rewrite-plan.ts';
import { appendLineage, type InheritedLineage, LineageReader, withLineageFields, withoutLineage } from './row-lineage.ts';

/**
 * Decoded rows held before they are encoded as one part (one row group of the output). Bounds
 * the decoded data in memory, whatever the target size; parts hold encoded bytes only.
 */
export const PART_DECODED_BYTES = 64 * 1024 * 1024;

/**
 * Where a bin's rows go. By default one file, unpartitioned; with `partition`, one file of that
 * partition of the current spec (the bin's files all have it); with `split`, one file per
 * partition of the spec given, which the rows are split by (files written under other specs).
 */
export type BinOutput = { partition?: Pick<PartitionedRows, 'record' | 'path'> } | { split: BoundPartitionSpec };

/**
 * Reads a bin's files one by one, a row group at a time, and writes their rows, in order and
 * value for value, as Parquet data files under the bin's schema (one, or one per partition: see
 * BinOutput), each file read through it by field id (see `conformerFor`); the metrics are
 * computed from the rows. Every file must give as many rows as its manifest entry says. With
 * `lineage` (format v3) each row's `_row_id` and `_last_updated_sequence_number` are written
 * too, as the file had them or as it inherited them (see `LineageReader`).
 */
export async function rewriteBin(
  io: FileIO,
  tableLocation: string,
  bin: RewriteBin,
  kept: KeptFiles,
  lineage?: (file: ManifestDataFile) => InheritedLineage,
  output: BinOutput = {},
): Promise<DataFile[]> {
  // v3: the rows carry their lineage, written explicitly after the table's columns.
  const schema = lineage ? withLineageFields(bin.schema) : bin.schema;
  const arrowSchema = lineage ? compileRowConverter(schema).arrowSchema : bin.arrowSchema;
  const outputs = new Map<string, { partition: Pick<PartitionedRows, 'record' | 'path'> | undefined; parts: ParquetPart[] }>();
  const add = (partition: Pick<PartitionedRows, 'record' | 'path'> | undefined, table: Table) => {
    const key = partition?.path ?? '';
    let out = outputs.get(key);
    if (out === undefined) outputs.set(key, (out = { partition, parts: [] }));
    out.parts.push(writeParquetPart(table, { schema }));
  };
  let pending: RecordBatch[] = [];
  let pendingBytes = 0;
  const flush = () => {
    if (pending.length === 0) return;
    const table = new Table(arrowSchema, pending);
    if ('split' in output && output.split.fields.length > 0) for (const part of splitByPartition(table, output.split)) add(part, part.table);
    else add('partition' in output ? output.partition : undefined, table);
    pending = [];
    pendingBytes = 0;
  };
  const reads = new ReadAhead(io, bin.files, kept);
  for (const [i, file] of bin.files.entries()) {
    const bytes = await reads.take(i);
    const fileSchema = parquetArrowSchema(bytes);
    const conformer = fileConformer(withoutLineage(fileSchema), bin);
    const reader = new LineageReader(fileSchema, lineage?.(file));
    if (conformer === null) throw new IcebergError('validation_failed', `${file.file_path} can no longer be read through the schema it was planned with`);
    let rows = 0n;
    for (const group of readParquetRowGroups(bytes)) {
      for (const batch of group) {
        const split = reader.split(batch);
        const conformed = lineage ? appendLineage(conformer.conform(split.rows), split.lineage, arrowSchema) : conformer.conform(split.rows);
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
  const written: DataFile[] = [];
  for (const { partition, parts } of outputs.values()) {
    written.push(await putDataFile({ io, tableLocation, written: joinParquetParts(parts, schema), ...(partition ? { partition } : {}) }));
  }
  return written;
}

/** Input files fetched ahead of the one being rewritten, or only that one when it is bigger. */
export const READ_AHEAD_BYTES = 64 * 1024 * 1024;

/**
 * Fetches the files ahead of the one being read (up to IO_WIDTH of them and READ_AHEAD_BYTES
 * in all), so that the store's latency overlaps the decoding instead of adding to it. Files the
 * planner kept are taken from `kept` (and let go) instead.
 */
class ReadAhead {
  private readonly fetches: Array<Promise<Uint8Array> | undefined> = [];
  private started = 0;
  private bytesAhead = 0;

  constructor(
    private readonly io: FileIO,
    private readonly files: readonly ManifestDataFile[],
    private readonly kept: KeptFiles,
  ) {}

  /** File `i`'s bytes; files are taken in order. */
  take(i: number): Promise<Uint8Array> {
    while (this.started < this.files.length && this.started - i < IO_WIDTH) {
      const size = Number((this.files[this.started] as ManifestDataFile).file_size_in_bytes);
      if (this.started > i && this.bytesAhead + size > READ_AHEAD_BYTES) break;
      const path = (this.files[this.started] as ManifestDataFile).file_path;
      const keptBytes = this.kept.get(path);
      this.kept.delete(path);
      const bytes = keptBytes === undefined ? this.io.get(path) : Promise.resolve(keptBytes);
      // Awaited in turn; a fetch never awaited (an earlier file failed) must not go unhandled.
      bytes.catch(() => undefined);
      this.fetches[this.started++] = bytes;
      this.bytesAhead += size;
    }
    const bytes = this.fetches[i] as Promise<Uint8Array>;
    this.fetches[i] = undefined;
    this.bytesAhead -= Number((this.files[i] as ManifestDataFile).file_size_in_bytes);
    return bytes;
  }
}
