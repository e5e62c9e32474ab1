import { type RecordBatch, type Schema as ArrowSchema, Table } from 'apache-arrow';
import type { NdjsonChunk, NdjsonConversion } from '../writer/ndjson-chunks.ts';
import { type NdjsonChunkError, type NdjsonChunkResult, type NdjsonReject, ndjsonChunkError } from '../writer/row-converter.ts';
import type { SegmentReply, SegmentTask } from './protocol.ts';

/**
 * How a conversion is cut into worker tasks, and how the tasks' results become one result:
 * chunks are cut at line ends only, so each piece holds whole lines (and whole UTF-8
 * characters: a newline byte is never part of one).
 */

/** Bytes [start, end) of chunk `chunk`; `last` when the chunk ends there. */
export interface Piece {
  chunk: number;
  start: number;
  end: number;
  last: boolean;
}

/** Tasks per worker in one conversion: more than one, so a worker slowed down shares its load. */
const TASKS_PER_WORKER = 2;
/** Below this, a task's messages cost more than the work. */
const MIN_TASK_BYTES = 1 << 20;

/** The chunks cut into tasks of about equal size, in order; empty chunks get no piece. */
export function planTasks(chunks: readonly NdjsonChunk[], workers: number): Piece[][] {
  const total = chunks.reduce((sum, chunk) => sum + chunk.bytes.length, 0);
  const target = Math.max(MIN_TASK_BYTES, Math.ceil(total / (workers * TASKS_PER_WORKER)));
  const tasks: Piece[][] = [];
  let current: Piece[] = [];
  let size = 0;
  chunks.forEach((chunk, c) => {
    const bytes = chunk.bytes;
    for (let start = 0; start < bytes.length; ) {
      let end = bytes.length;
      // size < target here, so the cut is at or after `start`.
      if (end - start > target - size) {
        const newline = bytes.indexOf(0x0a, start + target - size - 1);
        end = newline < 0 ? bytes.length : newline + 1;
      }
      current.push({ chunk: c, start, end, last: end === bytes.length });
      size += end - start;
      start = end;
      if (size >= target) {
        tasks.push(current);
        current = [];
        size = 0;
      }
    }
  });
  if (current.length > 0) tasks.push(current);
  return tasks;
}

/**
 * The chunks' bytes in shared memory, which workers read in place: bytes already there as they
 * are, the others copied once into one new shared buffer.
 */
export function sharedChunks(chunks: readonly NdjsonChunk[]): NdjsonChunk[] {
  const isShared = (chunk: NdjsonChunk) => chunk.bytes.buffer instanceof SharedArrayBuffer;
  const copied = new Uint8Array(new SharedArrayBuffer(chunks.reduce((sum, chunk) => sum + (isShared(chunk) ? 0 : chunk.bytes.length), 0)));
  let at = 0;
  return chunks.map((chunk) => {
    if (isShared(chunk)) return chunk;
    const bytes = copied.subarray(at, at + chunk.bytes.length);
    bytes.set(chunk.bytes);
    at += chunk.bytes.length;
    return { ...chunk, bytes };
  });
}

/** A task's segments: its pieces as views of the (shared) chunk bytes. */
export function taskSegments(chunks: readonly NdjsonChunk[], pieces: readonly Piece[]): SegmentTask[] {
  return pieces.map((piece) => {
    const chunk = chunks[piece.chunk] as NdjsonChunk;
    return { bytes: chunk.bytes.subarray(piece.start, piece.end), injected: chunk.injected, countLines: !piece.last };
  });
}

/** Each chunk's result from its pieces' results, in chunk order. */
export function chunkResults(chunkCount: number, tasks: readonly Piece[][], replies: readonly SegmentReply[][]): NdjsonChunkResult[] {
  const perChunk: SegmentReply[][] = Array.from({ length: chunkCount }, () => []);
  tasks.forEach((task, t) => task.forEach((piece, s) => perChunk[piece.chunk]?.push(replies[t]?.[s] as SegmentReply)));
  return perChunk.map(joinPieces);
}

/**
 * The rows of a task's batch to keep, as [start, end) ranges: all but those of chunks that
 * turned out unreadable as a whole (a chunk cut into pieces, one of which held a bad line).
 */
export function keptRows(task: readonly Piece[], replies: readonly SegmentReply[], chunks: readonly NdjsonChunkResult[]): Array<[number, number]> {
  const kept: Array<[number, number]> = [];
  let row = 0;
  let from = 0;
  task.forEach((piece, s) => {
    const result = (replies[s] as SegmentReply).result;
    const rows = result.ok ? result.rows : 0;
    if (!(chunks[piece.chunk] as NdjsonChunkResult).ok) {
      if (row > from) kept.push([from, row]);
      from = row + rows;
    }
    row += rows;
  });
  if (row > from) kept.push([from, row]);
  return kept;
}

/** Whether `kept` is every one of `rows` rows. */
export function keepsAll(kept: ReadonlyArray<[number, number]>, rows: number): boolean {
  return rows === 0 || (kept.length === 1 && kept[0]?.[0] === 0 && kept[0][1] === rows);
}

/**
 * The conversion from each task's record batch and segment results: the chunks' results, and
 * the batches without the rows of unreadable chunks. Gives what `convertNdjson` gives.
 */
export function assemble(
  schema: ArrowSchema,
  chunkCount: number,
  tasks: readonly Piece[][],
  batches: readonly RecordBatch[],
  replies: readonly SegmentReply[][],
): NdjsonConversion {
  const chunks = chunkResults(chunkCount, tasks, replies);
  const kept = tasks.flatMap((task, t) => {
    const batch = batches[t] as RecordBatch;
    const ranges = keptRows(task, replies[t] as SegmentReply[], chunks);
    return keepsAll(ranges, batch.numRows) ? [batch] : ranges.map(([start, end]) => batch.slice(start, end));
  });
  const table = new Table(schema, kept.filter((batch) => batch.numRows > 0));
  return { table, rows: table.numRows, chunks };
}

/**
 * One chunk's result from its pieces' in order. Like the single-threaded path, a chunk that is
 * not UTF-8 reports its first such line before any line that is not JSON.
 */
function joinPieces(replies: readonly SegmentReply[]): NdjsonChunkResult {
  let notUtf8: NdjsonChunkError | undefined;
  let notJson: NdjsonChunkError | undefined;
  let rows = 0;
  const rejects: NdjsonReject[] = [];
  let lines = 0;
  for (const { result, lines: pieceLines } of replies) {
    if (!result.ok) {
      const error = ndjsonChunkError(result.error.kind, result.error.line + lines, result.error.detail);
      if (error.kind === 'not_utf8') notUtf8 ??= error;
      else notJson ??= error;
    } else {
      rows += result.rows;
      for (const reject of result.rejects) rejects.push(lines === 0 ? reject : { ...reject, line: reject.line + lines });
    }
    lines += pieceLines;
  }
  const error = notUtf8 ?? notJson;
  return error === undefined ? { ok: true, rows, lines, rejects } : { ok: false, error };
}
