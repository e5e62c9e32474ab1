import type { Table } from 'apache-arrow';
import type { Schema } from '../spec/schema.ts';
import { compileRowConverter, type NdjsonChunkResult, type RowConverter, type RowConverterOptions } from './row-converter.ts';

/** NDJSON bytes to append, with the values of the injected columns for its rows. */
export interface NdjsonChunk {
  bytes: Uint8Array;
  /** One value per injected column (`RowConverterOptions.injected`), e.g. when the chunk was received. */
  injected?: Readonly<Record<string, unknown>>;
}

/** Rows of several NDJSON chunks as one Arrow table. */
export interface NdjsonConversion {
  /** The rows taken, in chunk and line order; the schema is the converter's `arrowSchema`. */
  table: Table;
  rows: number;
  /** One per chunk, in the order given. */
  chunks: NdjsonChunkResult[];
}

/**
 * Converts NDJSON chunks into one table, each chunk with `RowConverter.appendNdjson` (rows
 * taken one by one; a chunk that is not UTF-8 or has a line that is not JSON is left out
 * whole). The single-threaded twin of `NdjsonConverterPool.convert`.
 */
export function convertNdjson(schema: Schema, chunks: readonly NdjsonChunk[], options: RowConverterOptions = {}): NdjsonConversion {
  const converter = compileRowConverter(schema, options);
  const results = chunks.map((chunk, i) => {
    setChunkInjected(converter, options.injected ?? [], chunk, i);
    return converter.appendNdjson(chunk.bytes);
  });
  const rows = converter.rowCount;
  return { table: converter.finish(), rows, chunks: results };
}

/** Sets the injected columns to the chunk's values; every injected column needs one. */
export function setChunkInjected(converter: RowConverter, names: readonly string[], chunk: NdjsonChunk, index: number): void {
  const values = chunk.injected ?? {};
  for (const name of Object.keys(values)) {
    if (!names.includes(name)) throw new TypeError(`chunk ${index} sets ${name}, which is not an injected column`);
  }
  for (const name of names) {
    if (!Object.hasOwn(values, name)) throw new TypeError(`chunk ${index} has no value for the injected column ${name}`);
    converter.setInjected(name, values[name]);
  }
}
