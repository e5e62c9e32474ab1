import { type Table, tableFromIPC } from 'apache-arrow';
import { parquetMetadata, readOffsetIndex } from 'hyparquet';
import { readParquet } from 'parquet-wasm';
import { describe, expect, it } from 'vitest';
import { schemaFromJson } from '../spec/schema.ts';
import { mergeDataMetrics } from './metrics.ts';
import { LINES, SCHEMA } from './fixtures/ndjson-corpus.ts';
import { ParquetConcatError } from './parquet-concat.ts';
import { ParquetFooterError } from './parquet-footer.ts';
import { joinParquetParts, writeParquet, writeParquetPart } from './parquet.ts';
import { compileRowConverter } from './row-converter.ts';
import { decodeStruct, encodeStruct } from './thrift-compact.ts';

/** The corpus' rows, several times over with other ids and some long strings, in `count` tables. */
function tables(count: number): Table[] {
  const converter = compileRowConverter(SCHEMA, { injected: ['ingested'] });
  converter.setInjected('ingested', '2024-01-01T00:00:00Z');
  const result: Table[] = [];
  for (let part = 0; part < count; part++) {
    for (let copy = 0; copy < 40; copy++) {
      const shift = (part * 40 + copy) * 1000;
      const text = LINES.map((line) => line.replace(/"id":\s*(-?\d+)/, (_m, id: string) => `"id":${Number(id) + shift}`)).join('\n');
      converter.appendNdjson(Buffer.from(text));
      converter.append({ id: shift, name: `${'ž'.repeat(part + 14)}${copy}`, score: part - copy });
    }
    result.push(converter.finish());
  }
  return result;
}

function rows(parquet: Uint8Array): unknown[] {
  const table = tableFromIPC(readParquet(parquet).intoIPCStream());
  return JSON.parse(JSON.stringify(table.toArray().map((row) => row.toJSON()), (_k, v) => (typeof v === 'bigint' ? v.toString() : v)));
}

function footerOf(bytes: Uint8Array): Uint8Array {
  const length = new DataView(bytes.buffer, bytes.byteOffset).getUint32(bytes.length - 8, true);
  return bytes.subarray(bytes.length - 8 - length, bytes.length - 8);
}

describe('joinParquetParts', () => {
  const parts = tables(3);
  const joined = joinParquetParts(
    parts.map((table) => writeParquetPart(table, { schema: SCHEMA })),
    SCHEMA,
  );
  const all = compileRowConverter(SCHEMA).arrowSchema;
  const whole = writeParquet(new (parts[0]!.constructor as typeof Table)(all, parts.flatMap((t) => t.batches)), { schema: SCHEMA });

  it('makes one file holding every part as row groups, in order, that readers read whole', () => {
    const footer = parquetMetadata(joined.bytes);
    expect(footer.row_groups.map((group) => Number(group.num_rows))).toEqual(parts.map((t) => t.numRows));
    expect(Number(footer.num_rows)).toBe(joined.recordCount);
    expect(joined.recordCount).toBe(whole.recordCount);
    expect(rows(joined.bytes)).toEqual(rows(whole.bytes));
  });

  it('moves every offset with its bytes, offset indexes included', () => {
    const footer = parquetMetadata(joined.bytes);
    const view = new DataView(joined.bytes.buffer, joined.bytes.byteOffset, joined.bytes.byteLength);
    let previousEnd = 4;
    for (const group of footer.row_groups) {
      for (const chunk of group.columns) {
        const meta = chunk.meta_data!;
        const start = Number(meta.dictionary_page_offset ?? meta.data_page_offset);
        expect(start).toBe(previousEnd);
        previousEnd = start + Number(meta.total_compressed_size);
        const index = readOffsetIndex({ view, offset: Number(chunk.offset_index_offset) });
        expect(index.page_locations[0]?.offset).toBe(meta.data_page_offset);
        const last = index.page_locations.at(-1)!;
        expect(Number(last.offset) + last.compressed_page_size).toBe(previousEnd);
      }
    }
    expect(joined.metrics.splitOffsets).toEqual(footer.row_groups.map((group) => group.columns[0]?.meta_data?.dictionary_page_offset ?? group.columns[0]?.meta_data?.data_page_offset));
  });

  it('has the metrics of writing all the rows at once', () => {
    const { columnSizes, splitOffsets, ...data } = joined.metrics;
    const { columnSizes: wholeSizes, splitOffsets: _wholeSplits, ...wholeData } = whole.metrics;
    expect(data).toEqual(wholeData);
    expect([...(columnSizes?.keys() ?? [])].sort()).toEqual([...(wholeSizes?.keys() ?? [])].sort());
    expect(splitOffsets).toHaveLength(3);
    // Long strings were cut in both bounds; the merged ones are those of all rows.
    expect(Buffer.from(joined.metrics.upperBounds!.get(2)!).toString()).toBe(Buffer.from(whole.metrics.upperBounds!.get(2)!).toString());
  });

  it('leaves out an upper bound when a part could not have one', () => {
    const schema = schemaFromJson({ type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 's', required: false, type: 'string' }] });
    const part = (value: string) => {
      const converter = compileRowConverter(schema);
      converter.append({ s: value });
      return writeParquetPart(converter.finish(), { schema });
    };
    const top = '\u{10ffff}'.repeat(17);
    const merged = mergeDataMetrics([part('a').metrics, part(top).metrics], schema);
    expect(merged.upperBounds.has(1)).toBe(false);
    expect(Buffer.from(merged.lowerBounds.get(1)!).toString()).toBe('a');
  });

  it('refuses parts of another schema, and bytes that are not Parquet', () => {
    const other = schemaFromJson({ type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: true, type: 'long' }] });
    const converter = compileRowConverter(other);
    converter.append({ id: 1 });
    const foreign = writeParquetPart(converter.finish(), { schema: other });
    const mine = writeParquetPart(parts[0]!, { schema: SCHEMA });
    expect(() => joinParquetParts([mine, foreign])).toThrow(ParquetConcatError);
    expect(() => joinParquetParts([mine, { ...mine, bytes: new Uint8Array(20) }])).toThrow(ParquetFooterError);
  });

  it('decodes and encodes a footer to the same bytes', () => {
    const footer = footerOf(joined.bytes);
    expect(Buffer.from(encodeStruct(decodeStruct(footer).value)).equals(Buffer.from(footer))).toBe(true);
  });
});
