import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { RecordBatch, Struct } from 'apache-arrow';
import type { Schema } from '../spec/schema.ts';
import { type NdjsonChunk, type NdjsonConversion, setChunkInjected } from '../writer/ndjson-chunks.ts';
import { joinParquetParts, type ParquetPart, type WrittenParquet } from '../writer/parquet.ts';
import { compileRowConverter, type NdjsonChunkResult, type RowConverterOptions } from '../writer/row-converter.ts';
import { dataFromParts } from './arrow-transfer.ts';
import { assemble, chunkResults, keepsAll, keptRows, planTasks, sharedChunks, taskSegments } from './plan.ts';
import type { ConvertTask, ParquetOptions, WorkerReply } from './protocol.ts';

export interface NdjsonParquetOptions extends RowConverterOptions {
  /** How to write the file (the schema is the one converted to). */
  parquet?: ParquetOptions;
}

/** Rows of several NDJSON chunks as one Parquet file. */
export interface NdjsonParquet {
  /** Undefined when no row was taken. */
  parquet: WrittenParquet | undefined;
  rows: number;
  /** One per chunk, in the order given. */
  chunks: NdjsonChunkResult[];
}

export interface NdjsonPoolOptions {
  /** Worker threads (default: the machine's available parallelism). */
  workers?: number;
}

const WORKER_URL = new URL('./worker.mjs', import.meta.url);

type DoneReply = Extract<WorkerReply, { type: 'done' }>;

interface Pending {
  task: ConvertTask;
  resolve: (reply: DoneReply) => void;
  reject: (error: Error) => void;
}

interface PoolWorker {
  worker: Worker;
  busy: Pending | null;
}

/**
 * NDJSON → Arrow on worker threads. `convert` splits the chunks at line ends into tasks of
 * about equal size, the workers convert them (exactly as `convertNdjson` does, rejects and all)
 * and send back their record batches' buffers without copying, and the result is one table
 * with the rows in chunk and line order. Workers read the chunks in shared memory: chunks whose
 * bytes are in a SharedArrayBuffer are read in place, others are copied once. Start a pool
 * once and reuse it: a worker takes a moment to load.
 */
export class NdjsonConverterPool {
  private readonly queue: Pending[] = [];
  private nextId = 0;
  private failure: Error | null = null;
  private closing = false;

  private constructor(private readonly workers: PoolWorker[]) {
    for (const entry of workers) {
      entry.worker.on('message', (reply: WorkerReply) => this.onReply(entry, reply));
      entry.worker.on('error', (error) => this.fail(error));
      entry.worker.on('exit', (code) => {
        if (!this.closing) this.fail(new Error(`an NDJSON converter worker exited (code ${code})`));
      });
    }
  }

  /** Starts the workers and waits until each has loaded. */
  static async start(options: NdjsonPoolOptions = {}): Promise<NdjsonConverterPool> {
    const count = options.workers ?? os.availableParallelism();
    if (!Number.isInteger(count) || count < 1) throw new RangeError(`workers must be a positive integer, got ${count}`);
    const workers = await Promise.all(Array.from({ length: count }, startWorker));
    return new NdjsonConverterPool(workers.map((worker) => ({ worker, busy: null })));
  }

  get size(): number {
    return this.workers.length;
  }

  /** The rows of the chunks as one table; the same result as `convertNdjson(schema, chunks, options)`. */
  async convert(schema: Schema, chunks: readonly NdjsonChunk[], options: RowConverterOptions = {}): Promise<NdjsonConversion> {
    const { arrowSchema, tasks, replies } = await this.runTasks(schema, chunks, options, undefined);
    const type = new Struct(arrowSchema.fields);
    const batches = replies.map((reply) => {
      if (reply.data === undefined) throw new Error('a converter worker sent no record batch');
      return new RecordBatch(arrowSchema, dataFromParts(type, reply.data) as never);
    });
    return assemble(arrowSchema, chunks.length, tasks, batches, replies.map((reply) => reply.segments));
  }

  /**
   * The rows of the chunks as one Parquet file, written by the workers (a row group or more
   * per task) and joined: the rows, chunk results and metrics of `convertNdjson` followed by
   * `writeParquet(table, { ...parquet, schema })`; `parquet` is undefined when no row was taken.
   */
  async writeParquet(schema: Schema, chunks: readonly NdjsonChunk[], options: NdjsonParquetOptions = {}): Promise<NdjsonParquet> {
    const parquet = { compression: options.parquet?.compression, rowGroupSize: options.parquet?.rowGroupSize };
    const run = await this.runTasks(schema, chunks, options, parquet);
    const segments = run.replies.map((reply) => reply.segments);
    const results = chunkResults(chunks.length, run.tasks, segments);
    // A chunk cut into pieces may turn out unreadable after a worker wrote some of its rows:
    // such a task is written again without them (rare: it takes a line that is not JSON).
    const parts = await Promise.all(
      run.tasks.map(async (task, t) => {
        const reply = run.replies[t] as DoneReply;
        if (keepsAll(keptRows(task, reply.segments, results), reply.part?.recordCount ?? 0)) return reply.part;
        const kept = task.filter((piece) => (results[piece.chunk] as NdjsonChunkResult).ok);
        if (kept.length === 0) return undefined;
        const again = await this.run({ id: this.nextId++, schema, injected: run.injected, segments: taskSegments(run.shared, kept), parquet });
        return again.part;
      }),
    );
    const written = parts.filter((part): part is ParquetPart => part !== undefined);
    const rows = written.reduce((sum, part) => sum + part.recordCount, 0);
    return { parquet: written.length === 0 ? undefined : joinParquetParts(written, schema), rows, chunks: results };
  }

  /** Checks the chunks, cuts them into tasks and runs those on the workers. */
  private async runTasks(schema: Schema, chunks: readonly NdjsonChunk[], options: RowConverterOptions, parquet: ParquetOptions | undefined) {
    // Compiled here too: it checks the options and the injected values before any work, and
    // gives the Arrow types to rebuild the batches with.
    const converter = compileRowConverter(schema, options);
    const injected = options.injected ?? [];
    chunks.forEach((chunk, i) => setChunkInjected(converter, injected, chunk, i));
    const shared = sharedChunks(chunks);
    const tasks = planTasks(shared, this.workers.length);
    const replies = await Promise.all(
      tasks.map((pieces) => this.run({ id: this.nextId++, schema, injected, segments: taskSegments(shared, pieces), parquet })),
    );
    return { arrowSchema: converter.arrowSchema, injected, shared, tasks, replies };
  }

  /** Stops the workers; conversions still running fail. */
  async close(): Promise<void> {
    this.closing = true;
    this.fail(new Error('the NDJSON converter pool is closed'));
    await Promise.all(this.workers.map((entry) => entry.worker.terminate()));
  }

  private run(task: ConvertTask): Promise<DoneReply> {
    if (this.failure !== null) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.queue.push({ task, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    for (const entry of this.workers) {
      if (entry.busy !== null) continue;
      const next = this.queue.shift();
      if (next === undefined) return;
      entry.busy = next;
      // Idle workers do not keep the process alive; busy ones do, until they answer.
      entry.worker.ref();
      entry.worker.postMessage(next.task);
    }
  }

  private onReply(entry: PoolWorker, reply: WorkerReply): void {
    if (reply.type === 'ready') return;
    const pending = entry.busy;
    entry.busy = null;
    entry.worker.unref();
    if (pending !== null) {
      if (reply.type === 'done') pending.resolve(reply);
      else pending.reject(rebuiltError(reply.name, reply.message));
    }
    this.dispatch();
  }

  /** A worker died (or the pool closed): everything pending fails, and so will later calls. */
  private fail(error: Error): void {
    this.failure ??= error;
    for (const entry of this.workers) {
      entry.busy?.reject(this.failure);
      entry.busy = null;
    }
    for (const pending of this.queue.splice(0)) pending.reject(this.failure);
  }
}

function startWorker(): Promise<Worker> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_URL);
    const onError = (error: Error) => reject(error);
    worker.once('error', onError);
    worker.once('message', (reply: WorkerReply) => {
      worker.off('error', onError);
      // An idle pool must not keep the process alive.
      worker.unref();
      if (reply.type === 'ready') resolve(worker);
      else reject(new Error(`an NDJSON converter worker sent ${reply.type} before it was ready`));
    });
  });
}

/** The error a worker threw, as the same class where it is a standard one (TypeError for a bad injected value). */
function rebuiltError(name: string, message: string): Error {
  const classes: Record<string, ErrorConstructor> = { TypeError, RangeError, SyntaxError };
  return new (classes[name] ?? Error)(message);
}
