import { IcebergError, isIcebergError } from '../errors.ts';
import type { FileIO } from '../io/file-io.ts';
import { parseJson } from '../spec/json.ts';
import { metadataLog, type TableMetadata } from '../spec/metadata.ts';
import { IO_WIDTH, mapBounded } from '../transaction/bounded.ts';
import { readManifest, readManifestList } from '../writer/index.ts';

/**
 * Every file a table's metadata references, as orphan removal must keep it: the current
 * metadata file and each one its `metadata-log` names, and of each of them its snapshots'
 * manifest lists, their manifests, every data and delete file those list (entries of any
 * status), and its statistics and partition-statistics files; with `version-hint.text`.
 * Metadata files the log no longer names are orphans, as in Java's `DeleteOrphanFiles` (which
 * asks `ReachableFileUtil.metadataFileLocations` without recursion): a table whose writers set
 * `write.metadata.previous-versions-max` leaves them to the catalog, and a catalog that does not
 * delete them (SeaweedFS does not) leaves them here.
 *
 * Java's `DeleteOrphanFiles` takes the snapshots of the current metadata only; the snapshots of
 * the metadata files in the current log are kept here too, so a file an engine could still
 * reach by reading a recent metadata file is never taken for an orphan.
 *
 * Any failure to read a file reachable from the current metadata throws: a reference set with
 * a hole would make live files look like orphans. A file only the older metadata files reach
 * may be gone (expiry deletes the manifest lists of the snapshots it removes, which those
 * files still show); only `not_found` is forgiven there.
 */
export async function referencedFiles(io: FileIO, metadataLocation: string, metadata: TableMetadata): Promise<Set<string>> {
  const referenced = new Set<string>([metadataLocation, versionHint(metadata.location)]);
  const seen = new Set<string>();
  await addMetadata(io, metadata, referenced, seen, 'strict');
  const older = metadataLog(metadata).map((e) => e['metadata-file']);
  for (const location of older) referenced.add(location);
  const olderMetadata = await mapBounded(older, { width: IO_WIDTH }, (location) =>
    readForgivingMissing(io, location, parseMetadata),
  );
  for (const old of olderMetadata) if (old !== undefined) await addMetadata(io, old, referenced, seen, 'forgive_missing');
  return referenced;
}

function parseMetadata(bytes: Uint8Array): TableMetadata {
  return parseJson(new TextDecoder().decode(bytes)) as TableMetadata;
}

type Strictness = 'strict' | 'forgive_missing';

/** One metadata file's references; `seen` holds the lists and manifests already read. */
async function addMetadata(io: FileIO, metadata: TableMetadata, referenced: Set<string>, seen: Set<string>, strictness: Strictness): Promise<void> {
  for (const key of ['statistics', 'partition-statistics'] as const) {
    const files = metadata[key];
    if (!Array.isArray(files)) continue;
    for (const file of files as unknown[]) {
      const path = (file as { 'statistics-path'?: unknown } | null)?.['statistics-path'];
      if (typeof path !== 'string') throw new IcebergError('unsupported', `table metadata: a ${key} entry without statistics-path`);
      referenced.add(path);
    }
  }
  const lists = unseen(seen, (metadata.snapshots ?? []).map((s) => s['manifest-list']));
  for (const list of lists) referenced.add(list);
  const manifestLists = await mapBounded(lists, { width: IO_WIDTH }, (list) => read(io, list, strictness, readManifestList));
  const manifests = unseen(seen, manifestLists.flatMap((manifests) => (manifests ?? []).map((m) => m.manifest_path)));
  for (const manifest of manifests) referenced.add(manifest);
  const entries = await mapBounded(manifests, { width: IO_WIDTH }, (manifest) => read(io, manifest, strictness, contentFiles));
  for (const paths of entries) for (const path of paths ?? []) referenced.add(path);
}

/** The locations not read yet, once each; marks them read. */
function unseen(seen: Set<string>, locations: readonly string[]): string[] {
  const fresh = [...new Set(locations)].filter((location) => !seen.has(location));
  for (const location of fresh) seen.add(location);
  return fresh;
}

async function read<T>(io: FileIO, location: string, strictness: Strictness, decode: (bytes: Uint8Array) => T): Promise<T | undefined> {
  return strictness === 'strict' ? decode(await io.get(location)) : readForgivingMissing(io, location, decode);
}

async function readForgivingMissing<T>(io: FileIO, location: string, decode: (bytes: Uint8Array) => T): Promise<T | undefined> {
  let bytes: Uint8Array;
  try {
    bytes = await io.get(location);
  } catch (error) {
    if (isIcebergError(error, 'not_found')) return undefined;
    throw error;
  }
  return decode(bytes);
}

/** The data and delete file paths of a manifest's entries, whatever their status. */
function contentFiles(bytes: Uint8Array): string[] {
  return readManifest(bytes).entries.map((record) => {
    const path = (record as { data_file?: { file_path?: unknown } }).data_file?.file_path;
    if (typeof path !== 'string') throw new IcebergError('unsupported', 'manifest entry without data_file.file_path');
    return path;
  });
}

/** Hadoop tables name their current version here; Java keeps it, so do we. */
function versionHint(tableLocation: string): string {
  return `${tableLocation.replace(/\/+$/, '')}/metadata/version-hint.text`;
}
