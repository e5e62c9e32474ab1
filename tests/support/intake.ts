import { BATCH_METADATA, batchIdOfKey, decodeSegment, type ObjectStore, segmentIdOfKey, sinkPrefix } from '@tablemere/store';

/** A pending batch found in a sink's intake, wherever it is stored. */
export interface StoredBatch {
  id: string;
  /** The object holding it: a segment, or a batch object of the one-object-per-batch layout. */
  key: string;
  /** The segment's id; undefined for a batch object. */
  segment: string | undefined;
  bytes: Buffer;
  received: string;
  /** Lines of the batch (elements sent), as its segment's header or its object's metadata says. */
  lines: number;
  /** Of the object holding it. */
  contentType: string | undefined;
  metadata: Record<string, string>;
}

async function readAll(store: ObjectStore, key: string): Promise<{ bytes: Buffer; metadata: Record<string, string>; contentType: string | undefined }> {
  const { head, body } = await store.get(key);
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return { bytes: Buffer.concat(chunks), metadata: head.metadata, contentType: head.contentType };
}

/** Every batch pending in the sink's intake, read from the store alone (segments decoded), in key order. */
export async function storedBatches(store: ObjectStore, sinkId: string): Promise<StoredBatch[]> {
  const found: StoredBatch[] = [];
  for await (const page of store.list(sinkPrefix(sinkId), { delimiter: '/' })) {
    for (const { key } of page.objects) {
      const segment = segmentIdOfKey(sinkId, key);
      const batchId = batchIdOfKey(sinkId, key);
      if (segment === undefined && batchId === undefined) continue;
      const { bytes, metadata, contentType } = await readAll(store, key);
      if (segment === undefined) {
        found.push({ id: batchId!, key, segment, bytes, received: metadata[BATCH_METADATA.received]!, lines: Number(metadata[BATCH_METADATA.rows]), contentType, metadata });
        continue;
      }
      const decoded = decodeSegment(bytes, { sink: sinkId, segment });
      for (const entry of decoded.header.batches) {
        found.push({ id: entry.id, key, segment, bytes: decoded.batch(entry), received: entry.received, lines: entry.lines, contentType, metadata });
      }
    }
  }
  return found;
}

/** One pending batch by its id; fails when it is not in the intake exactly once. */
export async function storedBatch(store: ObjectStore, sinkId: string, batchId: string): Promise<StoredBatch> {
  const matches = (await storedBatches(store, sinkId)).filter((b) => b.id === batchId);
  if (matches.length !== 1) throw new Error(`batch ${batchId} of sink ${sinkId} is in the intake ${matches.length} times, not once`);
  return matches[0]!;
}
