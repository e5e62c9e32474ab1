import type { ListedFile } from '../io/file-io.ts';

/** Schemes that name the same store (Java's `equalSchemes` default: s3a and s3n are s3). */
const EQUAL_SCHEMES: Readonly<Record<string, string>> = { s3a: 's3', s3n: 's3' };

/** A location split as Java's `FileURI`: scheme and authority compared apart from the path. */
export interface FileUri {
  scheme: string | null;
  authority: string | null;
  /** The path, `/`-led, repeated slashes folded (as Hadoop's `Path` folds them). */
  path: string;
}

export function fileUri(location: string): FileUri {
  const match = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/]*)(.*)$/.exec(location);
  const fold = (path: string) => `/${path.split('/').filter(Boolean).join('/')}`;
  if (!match) return { scheme: null, authority: null, path: fold(location) };
  const scheme = match[1]!.toLowerCase();
  return { scheme: EQUAL_SCHEMES[scheme] ?? scheme, authority: match[2] || null, path: fold(match[3]!) };
}

/** Java's rule: an absent scheme or authority matches any. */
const sameOrAbsent = (a: string | null, b: string | null) => a === null || b === null || a === b;

export interface OrphanComparison {
  /** Listed files no reference names, older than the cutoff, outside hidden and excluded paths. */
  orphans: ListedFile[];
  /** Files a reference names by path under another scheme or authority: nothing may go while any exists. */
  conflicts: Array<{ listed: string; referenced: string }>;
  /** Unreferenced files left because they are younger than the cutoff. */
  young: number;
}

export interface CompareOptions {
  /** The table's location: only files under it are candidates. */
  tableLocation: string;
  /** Files last modified at or after this instant (epoch ms) are never candidates. */
  olderThan: number;
  /** Partition field names of every spec: a directory `<name>=…` is data even when the name starts with `_` or `.`. */
  partitionNames: readonly string[];
  /** Locations under which nothing is ever a candidate (e.g. a writer's own files). */
  excludedPrefixes?: readonly string[];
}

/**
 * Which listed files are orphans, by Java's `DeleteOrphanFiles` rules: files are matched by
 * path; a match whose scheme or authority differs is a conflict (its `PrefixMismatchMode.ERROR`,
 * the default: the caller deletes nothing); hidden paths (a directory or file name under the
 * table location starting with `_` or `.`, unless it is a partition directory) are never
 * listed; only files older than the cutoff count.
 */
export function compareFiles(listed: readonly ListedFile[], referenced: Iterable<string>, options: CompareOptions): OrphanComparison {
  const byPath = new Map<string, FileUri & { location: string }>();
  for (const location of referenced) byPath.set(fileUri(location).path, { ...fileUri(location), location });
  const root = fileUri(options.tableLocation);
  const excluded = (options.excludedPrefixes ?? []).map(fileUri);
  const result: OrphanComparison = { orphans: [], conflicts: [], young: 0 };
  for (const file of listed) {
    const uri = fileUri(file.location);
    if (!under(uri, root) || excluded.some((prefix) => under(uri, prefix))) continue;
    if (hidden(uri.path.slice(root.path.length + 1), options.partitionNames)) continue;
    const match = byPath.get(uri.path);
    if (match) {
      if (!sameOrAbsent(match.scheme, uri.scheme) || !sameOrAbsent(match.authority, uri.authority)) {
        result.conflicts.push({ listed: file.location, referenced: match.location });
      }
      continue;
    }
    if (file.lastModified < options.olderThan) result.orphans.push(file);
    else result.young++;
  }
  return result;
}

/** Strictly under `prefix` as a directory: `ns/t` does not contain `ns/t2/…`. */
function under(uri: FileUri, prefix: FileUri): boolean {
  const dir = prefix.path === '/' ? '/' : `${prefix.path}/`;
  return uri.path.startsWith(dir) && sameOrAbsent(uri.scheme, prefix.scheme) && sameOrAbsent(uri.authority, prefix.authority);
}

/** Java's `PartitionAwareHiddenPathFilter`, on every name of the path below the table location. */
function hidden(relative: string, partitionNames: readonly string[]): boolean {
  return relative.split('/').some((name) => (name.startsWith('_') || name.startsWith('.')) && !partitionNames.some((p) => name.startsWith(`${p}=`)));
}
