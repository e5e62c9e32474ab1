import { IcebergError } from '../errors.ts';
import type { SnapshotSummary } from '../spec/metadata.ts';

/** Data files a snapshot adds or removes, counted. */
export interface AppendedFiles {
  dataFiles: number;
  records: bigint;
  filesSize: bigint;
}

/** The parent's content as its manifest list counts it, for parents whose summary lacks totals. */
export interface ListedTotals {
  dataFiles: bigint;
  records: bigint;
  deleteFiles: bigint;
  /** Known only to a writer that read the parent's manifests (a manifest list does not say). */
  filesSize?: bigint;
}

const TOTAL_KEYS = [
  'total-data-files',
  'total-records',
  'total-files-size',
  'total-delete-files',
  'total-position-deletes',
  'total-equality-deletes',
] as const;

type TotalKey = (typeof TOTAL_KEYS)[number];

const REMOVED_KEYS = ['deleted-data-files', 'deleted-records', 'removed-files-size', 'changed-partition-count'] as const;

/** Keys this library computes; caller properties may not set them. */
const RESERVED = new Set<string>(['operation', 'added-data-files', 'added-records', 'added-files-size', ...REMOVED_KEYS, ...TOTAL_KEYS]);

const NOTHING: AppendedFiles = Object.freeze({ dataFiles: 0, records: 0n, filesSize: 0n });

function parseCount(value: string | undefined): bigint | undefined {
  return value !== undefined && /^\d+$/.test(value) ? BigInt(value) : undefined;
}

/**
 * The summary of an append snapshot: the added counts, every total computed from the parent
 * (writers do not carry totals forward for each other), and the caller's own properties.
 * A total the parent lacks is taken from its manifest list when that can count it, and left
 * out otherwise: a missing total is better than a wrong one.
 */
export function appendSummary(
  parent: SnapshotSummary | undefined,
  added: AppendedFiles,
  listed: ListedTotals | undefined,
  properties: Record<string, string> = {},
): SnapshotSummary {
  return snapshotSummary('append', parent, added, NOTHING, listed, properties);
}

/**
 * The summary of a `replace` snapshot (a rewrite of data files: the same rows in other files),
 * with the keys Java's SnapshotSummary gives one: what was added, what was deleted
 * (`deleted-data-files`, `deleted-records`, `removed-files-size`), the partitions changed (the
 * one of an unpartitioned table), and the totals from the parent's as for an append.
 */
export function replaceSummary(
  parent: SnapshotSummary | undefined,
  added: AppendedFiles,
  removed: AppendedFiles,
  listed: ListedTotals | undefined,
  properties: Record<string, string> = {},
  changedPartitions = 1,
): SnapshotSummary {
  const summary = snapshotSummary('replace', parent, added, removed, listed, properties);
  summary['deleted-data-files'] = String(removed.dataFiles);
  summary['deleted-records'] = String(removed.records);
  summary['removed-files-size'] = String(removed.filesSize);
  summary['changed-partition-count'] = String(changedPartitions);
  return summary;
}

function snapshotSummary(
  operation: string,
  parent: SnapshotSummary | undefined,
  added: AppendedFiles,
  removed: AppendedFiles,
  listed: ListedTotals | undefined,
  properties: Record<string, string>,
): SnapshotSummary {
  for (const [key, value] of Object.entries(properties)) {
    if (RESERVED.has(key)) throw new IcebergError('bad_request', `summary property ${key} is computed by the ${operation} and cannot be set`);
    if (typeof value !== 'string') throw new IcebergError('bad_request', `summary property ${key} must be a string`);
  }
  const changeByKey: Record<TotalKey, bigint> = {
    'total-data-files': BigInt(added.dataFiles - removed.dataFiles),
    'total-records': added.records - removed.records,
    'total-files-size': added.filesSize - removed.filesSize,
    'total-delete-files': 0n,
    'total-position-deletes': 0n,
    'total-equality-deletes': 0n,
  };
  const fromList: Partial<Record<TotalKey, bigint>> = listed
    ? {
        'total-data-files': listed.dataFiles,
        'total-records': listed.records,
        'total-delete-files': listed.deleteFiles,
        ...(listed.filesSize === undefined ? {} : { 'total-files-size': listed.filesSize }),
      }
    : {};
  const summary: SnapshotSummary = {
    ...properties,
    operation,
    'added-data-files': String(added.dataFiles),
    'added-records': String(added.records),
    'added-files-size': String(added.filesSize),
  };
  for (const key of TOTAL_KEYS) {
    const before = parent === undefined ? 0n : (parseCount(parent[key]) ?? fromList[key]);
    if (before !== undefined) summary[key] = String(before + changeByKey[key]);
  }
  return summary;
}
