import { tableFromIPC } from 'apache-arrow';
import { readParquet } from 'parquet-wasm';
import { describe, expect, it } from 'vitest';
import { IcebergError } from '../errors.ts';
import type { FileIO } from '../io/file-io.ts';
import { schemaFromJson } from '../spec/schema.ts';
import type { ManifestDataFile } from '../writer/manifest.ts';
import { writeParquet } from '../writer/parquet.ts';
import { compileRowConverter } from '../writer/row-converter.ts';
import { rewriteBin } from './rewrite-bin.ts';

const schema = schemaFromJson({
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 's', required: false, type: 'string' },
  ],
});
const arrowSchema = compileRowConverter(schema).arrowSchema;

/** An in-memory store that counts reads. */
function memoryIO(): FileIO & { files: Map<string, Uint8Array>; gets: string[] } {
  const files = new Map<string, Uint8Array>();
  const gets: string[] = [];
  return {
    files,
    gets,
    put: async (location, bytes) => void files.set(location, bytes),
    get: async (location) => {
      gets.push(location);
      const bytes = files.get(location);
      if (bytes === undefined) throw new IcebergError('not_found', location);
      return bytes;
    },
    delete: async (location) => void files.delete(location),
    exists: async (location) => files.has(location),
  };
}

/** Files of `rows` rows each, ids counting up, written to `io`; `claimed` overrides the record count of the manifest entry. */
function inputs(io: ReturnType<typeof memoryIO>, count: number, rows: number, claimed?: number): ManifestDataFile[] {
  return Array.from({ length: count }, (_, f) => {
    const converter = compileRowConverter(schema);
    for (let r = 0; r < rows; r++) converter.append({ id: f * rows + r, s: r % 2 ? null : `v${f}.${r}` });
    const { bytes } = writeParquet(converter.finish(), { schema, rowGroupSize: 2 });
    const path = `s3://b/t/data/in-${f}.parquet`;
    io.files.set(path, bytes);
    return { content: 0, file_path: path, file_format: 'PARQUET', partition: {}, record_count: BigInt(claimed ?? rows), file_size_in_bytes: BigInt(bytes.byteLength) };
  });
}

describe('rewriteBin', () => {
  it('fetches what the planner did not keep, and writes every row in order with its metrics', async () => {
    const io = memoryIO();
    const files = inputs(io, 12, 5);
    const kept = new Map([[files[0]!.file_path, io.files.get(files[0]!.file_path)!]]);
    const [out, ...more] = await rewriteBin(io, 's3://b/t', { schema, arrowSchema, files }, kept);
    expect(more).toEqual([]);
    expect(io.gets.sort()).toEqual(files.slice(1).map((f) => f.file_path).sort());
    expect(kept.size).toBe(0);
    expect(out!.recordCount).toBe(60);
    const table = tableFromIPC(readParquet(io.files.get(out!.filePath)!).intoIPCStream());
    expect(table.getChild('id')!.toArray()).toEqual(BigInt64Array.from({ length: 60 }, (_, i) => BigInt(i)));
    expect(table.getChild('s')!.get(10)).toBe('v2.0');
    expect(out!.metrics?.nullValueCounts?.get(2)).toBe(24n);
    expect(out!.metrics?.valueCounts?.get(1)).toBe(60n);
  });

  it('stops when a file holds other than the rows its manifest entry claims', async () => {
    const io = memoryIO();
    const error = await rewriteBin(io, 's3://b/t', { schema, arrowSchema, files: inputs(io, 3, 4, 5) }, new Map()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(IcebergError);
    expect((error as IcebergError).kind).toBe('validation_failed');
  });
});
