import type { Schema } from '../spec/schema.ts';
import type { ParquetPart, ParquetWriteOptions } from '../writer/parquet.ts';
import type { NdjsonChunkResult } from '../writer/row-converter.ts';
import type { DataParts } from './arrow-transfer.ts';

/** Messages between the pool and its workers. */

/** A piece of one chunk: whole lines, in shared memory. */
export interface SegmentTask {
  bytes: Uint8Array;
  injected: Readonly<Record<string, unknown>> | undefined;
  /** The chunk continues after this segment: its line count numbers the next segment's lines. */
  countLines: boolean;
}

export interface ConvertTask {
  id: number;
  schema: Schema;
  injected: readonly string[];
  segments: SegmentTask[];
  /** Absent: send the record batch back; present: write it as a Parquet part with these options. */
  parquet?: ParquetOptions;
}

/** What a pool writes Parquet with (the schema is the task's). */
export type ParquetOptions = Omit<ParquetWriteOptions, 'schema'>;

export interface SegmentReply {
  result: NdjsonChunkResult;
  /** Lines in the segment (those of an unreadable segment only when asked for). */
  lines: number;
}

export type WorkerReply =
  | { type: 'ready' }
  | { type: 'done'; id: number; segments: SegmentReply[]; data?: DataParts; part?: ParquetPart }
  | { type: 'failed'; id: number; name: string; message: string };
