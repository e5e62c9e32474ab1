import { randomBytes } from 'node:crypto';

const MAX_LONG = (1n << 63n) - 1n;

/** A random positive 63-bit snapshot id; it stays the same across retries of one commit. */
export function newSnapshotId(): bigint {
  let id = 0n;
  while (id === 0n) id = randomBytes(8).readBigUInt64BE() & MAX_LONG;
  return id;
}
