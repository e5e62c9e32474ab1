import type { PartitionSpec, SchemaJson, TableMetadata } from '../../spec/metadata.ts';

/** A namespace: one level as a string, or several levels. */
export type Namespace = string | readonly string[];

export interface TableIdent {
  namespace: Namespace;
  name: string;
}

/** A table identifier as the catalog lists it. */
export interface TableIdentifier {
  namespace: string[];
  name: string;
}

export interface StorageCredential {
  prefix: string;
  config: Record<string, string>;
}

export interface LoadTableResult {
  metadataLocation: string | undefined;
  metadata: TableMetadata;
  /** Table-specific settings from the catalog, e.g. vended `s3.*` credentials. */
  config: Record<string, string>;
  storageCredentials: StorageCredential[];
}

export interface CommitTableResult {
  metadataLocation: string;
  metadata: TableMetadata;
}

export interface CreateTableRequest {
  schema: Omit<SchemaJson, 'schema-id'> & { 'schema-id'?: number };
  partitionSpec?: Omit<PartitionSpec, 'spec-id'> & { 'spec-id'?: number };
  /** A sort order; `order-id` defaults to 0 (unsorted) without fields, 1 with. */
  writeOrder?: { 'order-id'?: number; fields: Record<string, unknown>[] };
  properties?: Record<string, string>;
  location?: string;
}

/** Preconditions the catalog checks atomically before applying a commit. */
export type TableRequirement =
  | { type: 'assert-create' }
  | { type: 'assert-table-uuid'; uuid: string }
  | { type: 'assert-ref-snapshot-id'; ref: string; 'snapshot-id': bigint | null }
  | { type: 'assert-current-schema-id'; 'current-schema-id': number }
  | { type: 'assert-last-assigned-field-id'; 'last-assigned-field-id': number }
  | { type: 'assert-last-assigned-partition-id'; 'last-assigned-partition-id': number }
  | { type: 'assert-default-spec-id'; 'default-spec-id': number }
  | { type: 'assert-default-sort-order-id'; 'default-sort-order-id': number };

export interface NewSnapshot {
  'snapshot-id': bigint;
  'parent-snapshot-id'?: bigint;
  'sequence-number': number;
  'timestamp-ms': number;
  'manifest-list': string;
  summary: Record<string, string> & { operation: string };
  'schema-id': number;
}

/** The metadata changes a commit applies, in order. */
export type TableUpdate =
  | { action: 'add-snapshot'; snapshot: NewSnapshot }
  | { action: 'set-snapshot-ref'; 'ref-name': string; type: 'branch' | 'tag'; 'snapshot-id': bigint }
  | { action: 'add-schema'; schema: Omit<SchemaJson, 'schema-id'> & { 'schema-id'?: number }; 'last-column-id'?: number }
  | { action: 'set-current-schema'; 'schema-id': number }
  /** A spec id left out (or -1 in set-default-spec) means the spec this commit adds. */
  | { action: 'add-spec'; spec: Omit<PartitionSpec, 'spec-id'> & { 'spec-id'?: number } }
  | { action: 'set-default-spec'; 'spec-id': number }
  | { action: 'remove-snapshots'; 'snapshot-ids': bigint[] }
  | { action: 'set-properties'; updates: Record<string, string> }
  | { action: 'remove-properties'; removals: string[] };

export interface CommitTableRequest {
  requirements: TableRequirement[];
  updates: TableUpdate[];
}
