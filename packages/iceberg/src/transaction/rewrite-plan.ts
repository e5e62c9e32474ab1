import type { Schema as ArrowSchema } from 'apache-arrow';
import type { FileIO } from '../io/file-io.ts';
import type { TableMetadata } from '../spec/metadata.ts';
import { type Schema, schemaFromJson } from '../spec/schema.ts';
import { conformerFor } from '../writer/arrow-conform.ts';
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

/** Files that are rewritten together into one output, under one table schema. */
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

interface SchemaGroup {
  schema: Schema;
  arrowSchema: ArrowSchema;
  files: ManifestDataFile[];
}

/**
 * Groups files by the table schema they were written with: the newest of the table's schemas
 * (the current one first) whose Arrow form the file's schema conforms to exactly (same field
 * ids, nullability and types at every level; row lineage columns aside). Files that match none are left out: they are never
 * rewritten under ids they do not have. Reads each file whole (FileIO has no ranged reads), at most
 * 64 MiB of them at once (or one file), and keeps the first 64 MiB of them in `kept` so that the
 * rewrite does not fetch them again (small files usually all fit).
 */
export async function groupBySchema(io: FileIO, metadata: TableMetadata, files: readonly ManifestEntry[], kept: KeptFiles): Promise<SchemaGroup[]> {
  const current = metadata['current-schema-id'];
  const candidates = [...metadata.schemas]
    .sort((a, b) => (a['schema-id'] === current ? -1 : b['schema-id'] === current ? 1 : b['schema-id'] - a['schema-id']))
    .map((json) => {
      const schema = schemaFromJson(json);
      return { schema, arrowSchema: compileRowConverter(schema).arrowSchema, files: [] as ManifestDataFile[] };
    });
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
    const fileSchema = fileSchemas[i] as ArrowSchema;
    candidates.find((group) => conformerFor(fileSchema, group.arrowSchema) !== null)?.files.push(dataFile);
  });
  return candidates.filter((group) => group.files.length > 0);
}

/**
 * Packs a group's files, in order, into bins of at most `targetBytes` of input each (next fit:
 * neighbouring commits stay together, so bounds on time columns stay narrow). A bin of one
 * file would only copy it and is dropped; a group of fewer than `minInputFiles` files is left.
 */
export function packBins(group: SchemaGroup, targetBytes: bigint, minInputFiles: number): RewriteBin[] {
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
