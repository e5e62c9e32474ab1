/**
 * Reads and writes whole files by absolute location (`s3://bucket/key`). Iceberg writes
 * immutable files, so put/get of complete objects is all a writer needs.
 */
export interface FileIO {
  /** Writes the file in one request, replacing any object at that location. */
  put(location: string, bytes: Uint8Array, options?: { contentType?: string }): Promise<void>;
  /** Reads the whole file; `not_found` when it does not exist. */
  get(location: string): Promise<Uint8Array>;
  /** Deletes the file; deleting a missing file succeeds. */
  delete(location: string): Promise<void>;
  exists(location: string): Promise<boolean>;
}

/** One object a listing found. */
export interface ListedFile {
  location: string;
  /** When the store last wrote the object (epoch ms). */
  lastModified: number;
  size: number;
}

/** A FileIO that can also list every object under a location prefix (orphan-file removal needs it). */
export interface ListingFileIO extends FileIO {
  /** Every object whose location starts with `prefix`, page by page; a failed page throws. */
  list(prefix: string): AsyncIterable<ListedFile>;
}

export interface ObjectLocation {
  bucket: string;
  key: string;
}

const SCHEMES = ['s3://', 's3a://', 's3n://'];

/** Splits `s3://bucket/key` into bucket and key. */
export function parseObjectLocation(location: string): ObjectLocation {
  const scheme = SCHEMES.find((s) => location.startsWith(s));
  if (!scheme) throw new TypeError(`not an s3 location: ${location}`);
  const rest = location.slice(scheme.length);
  const slash = rest.indexOf('/');
  if (slash <= 0 || slash === rest.length - 1) throw new TypeError(`an s3 location needs a bucket and a key: ${location}`);
  return { bucket: rest.slice(0, slash), key: rest.slice(slash + 1) };
}
