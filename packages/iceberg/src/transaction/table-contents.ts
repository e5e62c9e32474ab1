import type { FileIO } from '../io/file-io.ts';
import { branchHead, type TableMetadata } from '../spec/metadata.ts';
import { ENTRY_STATUS, type ManifestEntry, type ManifestFile, readManifestEntries, readManifestList } from '../writer/index.ts';
import { IO_WIDTH, mapBounded } from './bounded.ts';

/** What `main`'s head holds, as its manifests list it. */
export interface HeadContents {
  /** The head's manifest list; empty when the table has no snapshot. */
  manifests: ManifestFile[];
  /** The entries of each data manifest, by manifest path (inheritance applied). */
  entries: ReadonlyMap<string, readonly ManifestEntry[]>;
  /** Live (added or existing) data files by path, with the spec id of their manifest. */
  live: ReadonlyMap<string, { entry: ManifestEntry; specId: number }>;
  /** Live delete files, as the manifest list counts them. */
  deleteFiles: number;
}

/**
 * Manifests are immutable, so entries read once are kept by path: a retry on a new head reads
 * only the manifests that are new to it.
 */
export type ManifestCache = Map<string, readonly ManifestEntry[]>;

export async function readHeadContents(io: FileIO, metadata: TableMetadata, cache: ManifestCache): Promise<HeadContents> {
  const head = branchHead(metadata);
  const manifests = head ? readManifestList(await io.get(head['manifest-list'])) : [];
  const dataManifests = manifests.filter((manifest) => manifest.content === 0);
  const read = await mapBounded(dataManifests, { width: IO_WIDTH }, async (manifest) => {
    let cached = cache.get(manifest.manifest_path);
    if (cached === undefined) {
      cached = readManifestEntries(await io.get(manifest.manifest_path), manifest);
      cache.set(manifest.manifest_path, cached);
    }
    return cached;
  });
  const entries = new Map<string, readonly ManifestEntry[]>();
  const live = new Map<string, { entry: ManifestEntry; specId: number }>();
  dataManifests.forEach((manifest, i) => {
    entries.set(manifest.manifest_path, read[i] as readonly ManifestEntry[]);
    for (const entry of read[i] as readonly ManifestEntry[]) {
      if (entry.status !== ENTRY_STATUS.DELETED) live.set(entry.dataFile.file_path, { entry, specId: manifest.partition_spec_id });
    }
  });
  const deleteFiles = manifests.filter((m) => m.content !== 0).reduce((sum, m) => sum + m.added_files_count + m.existing_files_count, 0);
  return { manifests, entries, live, deleteFiles };
}
