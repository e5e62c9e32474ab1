import { parentPort } from 'node:worker_threads';
import { setChunkInjected } from '../writer/ndjson-chunks.ts';
import { writeParquetPart } from '../writer/parquet.ts';
import { compileRowConverter, type RowConverter } from '../writer/row-converter.ts';
import { dataParts } from './arrow-transfer.ts';
import type { ConvertTask, SegmentReply, WorkerReply } from './protocol.ts';

/** A pool worker: converts the segments of each task into one record batch and sends its buffers back. */

const port = parentPort;
if (port === null) throw new Error('ndjson-worker runs as a worker thread');

/** Converters compiled per schema and injected columns; a few, the most recent kept. */
const CACHED = 8;
const converters = new Map<string, RowConverter>();

function converterFor(task: ConvertTask): RowConverter {
  const key = JSON.stringify([task.schema, task.injected]);
  let converter = converters.get(key);
  if (converter === undefined) {
    converter = compileRowConverter(task.schema, { injected: task.injected });
    if (converters.size >= CACHED) converters.delete(converters.keys().next().value as string);
  } else {
    converters.delete(key);
  }
  converters.set(key, converter);
  return converter;
}

/** Newlines in `bytes` (a segment that is not a chunk's last ends with one). */
function countLines(bytes: Uint8Array): number {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let lines = 0;
  for (let at = b.indexOf(0x0a); at >= 0; at = b.indexOf(0x0a, at + 1)) lines++;
  return lines;
}

/** The task's rows as one record batch, and the memory to transfer with it. */
function convert(task: ConvertTask): { reply: WorkerReply; transfer: ArrayBuffer[] } {
  const converter = converterFor(task);
  const segments = task.segments.map((segment, i): SegmentReply => {
    setChunkInjected(converter, task.injected, segment, i);
    const result = converter.appendNdjson(segment.bytes);
    // An unreadable segment stopped early: count its lines apart (rare).
    const lines = result.ok ? result.lines : segment.countLines ? countLines(segment.bytes) : 0;
    return { result, lines };
  });
  const table = converter.finish();
  if (task.parquet !== undefined) {
    // Empty tasks (every line rejected or blank) write no part.
    if (table.numRows === 0) return { reply: { type: 'done', id: task.id, segments }, transfer: [] };
    const part = writeParquetPart(table, { ...task.parquet, schema: task.schema });
    return { reply: { type: 'done', id: task.id, segments, part }, transfer: [part.bytes.buffer as ArrayBuffer] };
  }
  const batch = table.batches[0];
  if (batch === undefined) throw new Error('a finished converter returned no record batch');
  const transfer = new Set<ArrayBuffer>();
  const data = dataParts(batch.data, transfer);
  return { reply: { type: 'done', id: task.id, segments, data }, transfer: [...transfer] };
}

port.on('message', (task: ConvertTask) => {
  let done: { reply: WorkerReply; transfer: ArrayBuffer[] };
  try {
    done = convert(task);
  } catch (error) {
    const { name, message } = error instanceof Error ? error : new Error(String(error));
    done = { reply: { type: 'failed', id: task.id, name, message }, transfer: [] };
  }
  port.postMessage(done.reply, done.transfer);
});
port.postMessage({ type: 'ready' } satisfies WorkerReply);
