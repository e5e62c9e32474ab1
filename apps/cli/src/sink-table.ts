import { readFileSync } from 'node:fs';
import { INFER_SAMPLE_MAX_ROWS, type SinkTableRequest } from '@tablemere/contracts';
import { parseColumn } from './columns.ts';
import { usageError } from './errors.ts';
import { scanRows } from './json-input.ts';

/** The API takes request bodies up to 1 MiB; the sample travels in one. */
const SAMPLE_MAX_BYTES = 1024 * 1024;

export interface SinkTableOptions {
  column?: string[];
  inferFrom?: string;
}

/** The flag that gives the table, for messages. */
export const sinkTableFlag = (options: SinkTableOptions) => (options.inferFrom !== undefined ? `--infer-from ${options.inferFrom}` : '--column');

/** `create_table` of the sink create request from `--column` or `--infer-from`; undefined when neither is given. */
export async function sinkTableRequest(options: SinkTableOptions): Promise<SinkTableRequest | undefined> {
  if (options.column !== undefined && options.inferFrom !== undefined) throw usageError('give --column or --infer-from, not both');
  if (options.column !== undefined) return { columns: options.column.map(parseColumn) };
  if (options.inferFrom !== undefined) return { infer_from: await sampleRows(options.inferFrom) };
  return undefined;
}

/** The rows of a JSON array or NDJSON file (as `sink send` reads them), which must be objects. */
async function sampleRows(file: string): Promise<Array<Record<string, unknown>>> {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw usageError(`--infer-from: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  if (bytes.length > SAMPLE_MAX_BYTES) throw usageError(`--infer-from ${file}: over 1 MiB, more than the request may carry; give fewer sample rows`);
  const rows: Array<Record<string, unknown>> = [];
  for await (const row of scanRows(once(bytes), { maxRowBytes: SAMPLE_MAX_BYTES, source: file })) {
    if (rows.length === INFER_SAMPLE_MAX_ROWS) throw usageError(`--infer-from ${file}: more than ${INFER_SAMPLE_MAX_ROWS} rows; give at most ${INFER_SAMPLE_MAX_ROWS} sample rows`);
    const value: unknown = JSON.parse(row.bytes.toString('utf8'));
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw usageError(`${file} line ${row.line}: row ${row.index} is not a JSON object`);
    rows.push(value as Record<string, unknown>);
  }
  if (rows.length === 0) throw usageError(`--infer-from ${file}: no rows; give a JSON array or NDJSON of sample rows`);
  return rows;
}

async function* once(bytes: Buffer): AsyncGenerator<Uint8Array> {
  yield bytes;
}
