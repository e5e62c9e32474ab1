import type { Schema as ArrowSchema } from 'apache-arrow';
import type { FileIO } from '../io/file-io.ts';
import { currentSchema, type TableMetadata } from '../spec/metadata.ts';
import { type Schema, schemaFromJson } from '../spec/schema.ts';
import type { IcebergType, NestedField, StructType } from '../spec/types.ts';
import { type Conformer, conformerFor } from '../writer/arrow-conform.ts';
import type { ManifestDataFile, ManifestEntry } from '../writer/manifest.ts';
import { parquetArrowSchema } from '../writer/parquet-read.ts';
import { compileRowConverter } from '../writer/row-converter.ts';
import { IO_WIDTH, mapBounded } from './bounded.ts';
import { withoutLineage } from './row-lineage.ts';
import type { HeadContents } from './table-contents.ts';

/** Bytes of data files held at once while their schemas are read, and kept for the rewrite after. */
const SCHEMA_READ_BUDGET = 64 * 1024 * 1024;

/** Files read while planning whose bytes were kept, by path: the rewrite takes them from here. */
export type KeptFiles = Map<string, Uint8Array>;

/** Files rewritten under the table's current schema: all the readable small files, or a bin of them written together. */
export interface RewriteBin {
  schema: Schema;
  /** The Arrow form of `schema` this package writes. */
  arrowSchema: ArrowSchema;
  files: ManifestDataFile[];
}

/**
 * The live data files worth rewriting: Parquet data files of any spec (see packPartitionBins),
 * unencrypted, smaller than the target, oldest commit first (by data sequence number, then path).
 */
export function smallFiles(contents: HeadContents, targetBytes: bigint): ManifestEntry[] {
  return [...contents.live.values()]
    .filter(({ entry }) => {
      const file = entry.dataFile;
      return file.content === 0 && file.file_format.toUpperCase() === 'PARQUET' && file.key_metadata == null && file.file_size_in_bytes < targetBytes;
    })
    .map(({ entry }) => entry)
    .sort((a, b) => compareBigint(a.sequenceNumber ?? 0n, b.sequenceNumber ?? 0n) || (a.dataFile.file_path < b.dataFile.file_path ? -1 : 1));
}

function compareBigint(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The small files that can be read through the table's current schema (see `fileConformer`),
 * to be written under it whatever schema they were written with, as Java's RewriteDataFiles does.
 * Files that cannot (a column of a type that does not widen to today's) are left out: they are
 * never rewritten. Reads each file whole (FileIO has no ranged reads), at most 64 MiB of them at
 * once (or one file), and keeps the first 64 MiB of them in `kept` so that the rewrite does not
 * fetch them again (small files usually all fit).
 */
export async function readableFiles(io: FileIO, metadata: TableMetadata, files: readonly ManifestEntry[], kept: KeptFiles): Promise<RewriteBin> {
  const schema = schemaFromJson(currentSchema(metadata));
  const group: RewriteBin = { schema, arrowSchema: compileRowConverter(schema).arrowSchema, files: [] };
  let keptBytes = 0;
  const fileSchemas = await mapBounded(
    files,
    { width: IO_WIDTH, budget: SCHEMA_READ_BUDGET, weight: (e) => Number(e.dataFile.file_size_in_bytes) },
    async (e) => {
      const bytes = await io.get(e.dataFile.file_path);
      if (keptBytes + bytes.byteLength <= SCHEMA_READ_BUDGET) {
        keptBytes += bytes.byteLength;
        kept.set(e.dataFile.file_path, bytes);
      }
      return withoutLineage(parquetArrowSchema(bytes));
    },
  );
  files.forEach(({ dataFile }, i) => {
    if (fileConformer(fileSchemas[i] as ArrowSchema, group) !== null) group.files.push(dataFile);
    else kept.delete(dataFile.file_path);
  });
  return group;
}

/** Reads a file (its Arrow schema, row lineage aside) through a table schema by field id; null when it cannot be. */
export function fileConformer(fileSchema: ArrowSchema, target: Pick<RewriteBin, 'schema' | 'arrowSchema'>): Conformer | null {
  return conformerFor(fileSchema, target.arrowSchema, defaultedIds(target.schema.fields));
}

/** The ids of the fields (at any depth) that have a v3 initial default: a file without them reads that default, not null. */
function defaultedIds(fields: readonly NestedField[], ids = new Set<string>()): Set<string> {
  for (const field of fields) {
    if (field.initialDefault !== undefined && field.initialDefault !== null) ids.add(String(field.id));
    for (const type of nestedStructs(field.type)) defaultedIds(type.fields, ids);
  }
  return ids;
}

/** The struct types within a type: itself, a list's element, a map's key and value, at any depth. */
function nestedStructs(type: IcebergType): StructType[] {
  switch (type.kind) {
    case 'struct':
      return [type];
    case 'list':
      return nestedStructs(type.element);
    case 'map':
      return [...nestedStructs(type.key), ...nestedStructs(type.value)];
    default:
      return [];
  }
}

/**
 * Packs a group's files, in order, into bins of at most `targetBytes` of input each (next fit:
 * neighbouring commits stay together, so bounds on time columns stay narrow). A bin of one
 * file would only copy it and is dropped; a group of fewer than `minInputFiles` files is left.
 */
export function packBins(group: RewriteBin, targetBytes: bigint, minInputFiles: number): RewriteBin[] {
  if (group.files.length < minInputFiles) return [];
  const bins: ManifestDataFile[][] = [];
  let bin: ManifestDataFile[] = [];
  let size = 0n;
  for (const file of group.files) {
    if (bin.length > 0 && size + file.file_size_in_bytes > targetBytes) {
      bins.push(bin);
      bin = [];
      size = 0n;
    }
    bin.push(file);
    size += file.file_size_in_bytes;
  }
  bins.push(bin);
  return bins.filter((files) => files.length > 1).map((files) => ({ schema: group.schema, arrowSchema: group.arrowSchema, files }));
}
