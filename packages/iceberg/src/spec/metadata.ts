/**
 * Table metadata as the REST catalog returns it (format v2 field names), parsed with
 * `parseJson` so every snapshot id is a bigint. Only the fields this library reads are typed;
 * the rest pass through untouched.
 */

/** A schema as Iceberg serialises it: `{type: "struct", "schema-id", fields}`. */
export interface SchemaJson {
  type: 'struct';
  'schema-id': number;
  fields: ReadonlyArray<Record<string, unknown> & { id: number; name: string; required: boolean; type: unknown }>;
  'identifier-field-ids'?: number[];
}

export interface SnapshotSummary {
  operation: string;
  [key: string]: string;
}

export interface Snapshot {
  'snapshot-id': bigint;
  'parent-snapshot-id'?: bigint | null;
  'sequence-number'?: number;
  'timestamp-ms': number;
  'manifest-list': string;
  summary: SnapshotSummary;
  'schema-id'?: number;
  /** v3 row lineage: the snapshot's first row id and the ids it assigned (numbers or, past 2^53, bigints). */
  'first-row-id'?: number | bigint;
  'added-rows'?: number | bigint;
}

export interface SnapshotRef {
  'snapshot-id': bigint;
  type: 'branch' | 'tag';
  [key: string]: unknown;
}

export interface PartitionField {
  'source-id': number;
  'field-id': number;
  name: string;
  transform: string;
}

export interface PartitionSpec {
  'spec-id': number;
  fields: PartitionField[];
}

export interface TableMetadata {
  'format-version': number;
  'table-uuid': string;
  location: string;
  'last-sequence-number'?: number;
  'last-updated-ms': number;
  'last-column-id': number;
  schemas: SchemaJson[];
  'current-schema-id': number;
  'partition-specs': PartitionSpec[];
  'default-spec-id': number;
  'last-partition-id'?: number;
  properties?: Record<string, string>;
  'current-snapshot-id'?: bigint | null;
  snapshots?: Snapshot[];
  refs?: Record<string, SnapshotRef>;
  [key: string]: unknown;
}

export const MAIN_BRANCH = 'main';

export function currentSchema(metadata: TableMetadata): SchemaJson {
  const schema = metadata.schemas.find((s) => s['schema-id'] === metadata['current-schema-id']);
  if (!schema) throw new TypeError(`table metadata has no schema ${metadata['current-schema-id']}`);
  return schema;
}

export function defaultPartitionSpec(metadata: TableMetadata): PartitionSpec {
  const spec = metadata['partition-specs'].find((s) => s['spec-id'] === metadata['default-spec-id']);
  if (!spec) throw new TypeError(`table metadata has no partition spec ${metadata['default-spec-id']}`);
  return spec;
}

export function snapshotById(metadata: TableMetadata, id: bigint): Snapshot | undefined {
  return metadata.snapshots?.find((s) => s['snapshot-id'] === id);
}

/**
 * The snapshot id a branch points at, or null when the branch has no snapshot. For `main`
 * older metadata may only carry `current-snapshot-id`, where -1 also means none.
 */
export function branchHeadId(metadata: TableMetadata, branch: string = MAIN_BRANCH): bigint | null {
  const ref = metadata.refs?.[branch];
  if (ref) return ref['snapshot-id'];
  if (branch !== MAIN_BRANCH) return null;
  const current = metadata['current-snapshot-id'];
  return current === undefined || current === null || current === -1n ? null : current;
}

export function branchHead(metadata: TableMetadata, branch: string = MAIN_BRANCH): Snapshot | undefined {
  const id = branchHeadId(metadata, branch);
  return id === null ? undefined : snapshotById(metadata, id);
}

/**
 * The snapshots of a branch, newest first, following parent links. The walk ends at the
 * first parent that is no longer in the metadata (snapshot expiry removes old ones).
 */
export function* branchAncestry(metadata: TableMetadata, branch: string = MAIN_BRANCH): Generator<Snapshot> {
  let snapshot = branchHead(metadata, branch);
  const seen = new Set<bigint>();
  while (snapshot && !seen.has(snapshot['snapshot-id'])) {
    seen.add(snapshot['snapshot-id']);
    yield snapshot;
    const parent = snapshot['parent-snapshot-id'];
    snapshot = parent === undefined || parent === null ? undefined : snapshotById(metadata, parent);
  }
}

/**
 * Whether the branch's ancestry, as this metadata shows it, holds every snapshot committed on the
 * branch since `since` (epoch ms) and not rolled back: the walk reaches the table's first
 * snapshot, or a snapshot no newer than `since`. A walk that ends at an expired parent, or at a
 * parentless snapshot that is not the first (Nessie serves the head alone, without its parent
 * id), shows nothing before where it ends.
 */
export function ancestryCovers(metadata: TableMetadata, since: number, branch: string = MAIN_BRANCH): boolean {
  let oldest: Snapshot | undefined;
  for (const snapshot of branchAncestry(metadata, branch)) oldest = snapshot;
  return oldest === undefined || isFirstSnapshot(oldest) || oldest['timestamp-ms'] <= since;
}

/** A snapshot with no parent that is the table's first (v1 tables have no sequence numbers). */
export function isFirstSnapshot(snapshot: Snapshot): boolean {
  const parent = snapshot['parent-snapshot-id'];
  return (parent === undefined || parent === null) && (snapshot['sequence-number'] ?? 0) <= 1;
}

/** True when the snapshot is the branch head or one of its reachable ancestors. */
export function isInAncestry(metadata: TableMetadata, snapshotId: bigint, branch: string = MAIN_BRANCH): boolean {
  for (const snapshot of branchAncestry(metadata, branch)) {
    if (snapshot['snapshot-id'] === snapshotId) return true;
  }
  return false;
}

/** The newest snapshot on the branch whose summary has `key` equal to `value`. */
export function findInAncestry(
  metadata: TableMetadata,
  key: string,
  value: string,
  branch: string = MAIN_BRANCH,
): Snapshot | undefined {
  for (const snapshot of branchAncestry(metadata, branch)) {
    if (snapshot.summary[key] === value) return snapshot;
  }
  return undefined;
}

/** One earlier metadata file of the table, as `metadata-log` lists it. */
export interface MetadataLogEntry {
  /** When that version was written: its `last-updated-ms`. */
  'timestamp-ms': number;
  'metadata-file': string;
}

/**
 * The earlier metadata files the table metadata lists, oldest first, each the version just
 * before the next (the last one is the version before the current); empty when it keeps none.
 * Writers keep the last `write.metadata.previous-versions-max` of them (Java's default 100),
 * and each still shows the snapshots and refs of its time, even after expiry removed them from
 * the current metadata. Only the entries after a malformed one are given, so that the list
 * stays unbroken.
 */
export function metadataLog(metadata: TableMetadata): MetadataLogEntry[] {
  const log = metadata['metadata-log'];
  if (!Array.isArray(log)) return [];
  const entries: MetadataLogEntry[] = [];
  for (const e of log as unknown[]) {
    const entry = e as Partial<Record<keyof MetadataLogEntry, unknown>> | null;
    if (typeof entry?.['metadata-file'] === 'string' && typeof entry['timestamp-ms'] === 'number') {
      entries.push({ 'timestamp-ms': entry['timestamp-ms'], 'metadata-file': entry['metadata-file'] });
    } else {
      entries.length = 0;
    }
  }
  return entries;
}
