// When a sink is due is the API's to say (apps/api/src/domain/rolls/due.ts); this is how much one roll takes.

export interface Listed {
  key: string;
  size: number;
  lastModified: Date | undefined;
}

/**
 * The batches one roll takes from a listing: oldest first (by the store's time, then key),
 * no more bytes than `maxBytes` — except that a single batch larger than that is still taken
 * on its own, or it would never roll — and at most `maxBatches`, a sanity cap on the ids one
 * roll carries (not the 1,000 that make a sink due).
 */
export function selectBatches<T extends Listed>(listed: readonly T[], limits: { maxBatches: number; maxBytes: number }): T[] {
  const ordered = [...listed].sort((a, b) => (a.lastModified?.getTime() ?? 0) - (b.lastModified?.getTime() ?? 0) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const taken: T[] = [];
  let bytes = 0;
  for (const object of ordered) {
    if (taken.length >= limits.maxBatches) break;
    if (taken.length > 0 && bytes + object.size > limits.maxBytes) break;
    taken.push(object);
    bytes += object.size;
  }
  return taken;
}
