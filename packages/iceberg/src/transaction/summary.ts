import { IcebergError } from '../errors.ts';
import type { SnapshotSummary } from '../spec/metadata.ts';

/** What one append adds. */
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

/** Keys this library computes; caller properties may not set them. */
const RESERVED = new Set<string>(['operation', 'added-data-files', 'added-records', 'added-files-size', ...TOTAL_KEYS]);

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
  for (const [key, value] of Object.entries(properties)) {
    if (RESERVED.has(key)) throw new IcebergError('bad_request', `summary property ${key} is computed by the append and cannot be set`);
    if (typeof value !== 'string') throw new IcebergError('bad_request', `summary property ${key} must be a string`);
  }
  const addedByKey: Record<TotalKey, bigint> = {
    'total-data-files': BigInt(added.dataFiles),
    'total-records': added.records,
    'total-files-size': added.filesSize,
    'total-delete-files': 0n,
    'total-position-deletes': 0n,
    'total-equality-deletes': 0n,
  };
  const fromList: Partial<Record<TotalKey, bigint>> = listed
    ? { 'total-data-files': listed.dataFiles, 'total-records': listed.records, 'total-delete-files': listed.deleteFiles }
    : {};
  const summary: SnapshotSummary = {
    ...properties,
    operation: 'append',
    'added-data-files': String(added.dataFiles),
    'added-records': String(added.records),
    'added-files-size': String(added.filesSize),
  };
  for (const key of TOTAL_KEYS) {
    const before = parent === undefined ? 0n : (parseCount(parent[key]) ?? fromList[key]);
    if (before !== undefined) summary[key] = String(before + addedByKey[key]);
  }
  return summary;
}
