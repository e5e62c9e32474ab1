import { bindPartitionSpec } from '../partition/bound-spec.ts';
import { partitionOfRecord } from '../partition/split.ts';
import { currentSchema, defaultPartitionSpec, type TableMetadata } from '../spec/metadata.ts';
import { schemaFromJson } from '../spec/schema.ts';
import type { DataFile } from '../writer/data-file.ts';
import type { ManifestDataFile } from '../writer/manifest.ts';
import type { BinOutput } from './rewrite-bin.ts';
import { packBins, type RewriteBin } from './rewrite-plan.ts';
import type { HeadContents } from './table-contents.ts';

/** A bin and where its rows go. */
export interface PartitionedBin extends RewriteBin {
  output: BinOutput;
}

/**
 * Packs the small files to rewrite (see readableFiles) into bins per partition, as Java's
 * rewrite planner groups them (BinPackRewriteFilePlanner.groupByPartition): files written under the table's default
 * spec by their partition tuple, so each output file holds one partition; files of any other
 * spec all together, their rows split by the default spec as they are written again (such a
 * file may hold rows of many of today's partitions). Each partition's files are packed on their
 * own (see packBins: fewer than `minInputFiles` in a partition stay as they are).
 */
export function packPartitionBins(
  group: Omit<RewriteBin, 'files'> & { files: readonly ManifestDataFile[] },
  metadata: TableMetadata,
  contents: HeadContents,
  targetBytes: bigint,
  minInputFiles: number,
): PartitionedBin[] {
  const spec = defaultPartitionSpec(metadata);
  const bound = bindPartitionSpec(spec, schemaFromJson(currentSchema(metadata)));
  const partitions = new Map<string, { files: ManifestDataFile[]; output: BinOutput }>();
  for (const file of group.files) {
    const current = contents.live.get(file.file_path)?.specId === spec['spec-id'];
    const key = current ? `tuple ${partitionKey(file.partition)}` : 'other specs';
    let partition = partitions.get(key);
    if (partition === undefined) {
      const output: BinOutput = !current ? { split: bound } : bound.fields.length > 0 ? { partition: partitionOfRecord(bound, file.partition) } : {};
      partitions.set(key, (partition = { files: [], output }));
    }
    partition.files.push(file);
  }
  return [...partitions.values()].flatMap(({ files, output }) =>
    packBins({ schema: group.schema, arrowSchema: group.arrowSchema, files }, targetBytes, minInputFiles).map((bin) => ({ ...bin, output })),
  );
}

/** A partition record (Avro form: numbers, bigints, strings, bytes) as a map key. */
function partitionKey(record: Record<string, unknown>): string {
  return JSON.stringify(Object.entries(record), (_, v: unknown) =>
    typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? `0x${Buffer.from(v).toString('hex')}` : v,
  );
}

/** Partitions (spec and tuple) a rewrite touches, as Java's `changed-partition-count` counts them. */
export function changedPartitions(contents: HeadContents, replaced: readonly ManifestDataFile[], specId: number, added: readonly DataFile[]): number {
  const keys = new Set([
    ...replaced.map((f) => `${contents.live.get(f.file_path)?.specId} ${partitionKey(f.partition)}`),
    ...added.map((f) => `${specId} ${partitionKey(f.partition ?? {})}`),
  ]);
  return keys.size;
}
