import { randomBytes } from 'node:crypto';
import { RECEIVED_STAMP, sinkPrefix } from './intake-layout.ts';

/**
 * A segment: the batches of one sink that one API process wrote together, in one object
 * (`_sink/<sink_id>/<segment_id>.seg`). Its first line is a JSON header naming every batch and
 * where its bytes are; after it come the batches' NDJSON bytes exactly as a batch object would
 * hold them, one after the other, each ending with a newline. Everything a roll or a recovery
 * needs to know about its batches is in the object itself.
 *
 *   {"format":"tablemere-segment/1","sink":"snk_…","segment":"…","batches":[
 *     {"id":"b-1","offset":0,"bytes":120,"lines":3,"received":"2026-12-04T10:00:00.123456Z"}, …]}
 *   <b-1's lines>
 *   <b-2's lines> …
 *
 * Offsets count from the byte after the header's newline. A batch id occurs once in a segment.
 */
export const SEGMENT_SUFFIX = '.seg';
export const SEGMENT_FORMAT = 'tablemere-segment/1';
export const SEGMENT_CONTENT_TYPE = 'application/x-ndjson';

/** Metadata names on a segment object (sent as `x-amz-meta-<name>`), for operators browsing the bucket. */
export const SEGMENT_METADATA = { format: 'format', sink: 'sink', batches: 'batches' } as const;

export interface SegmentEntry {
  id: string;
  /** From the byte after the header line. */
  offset: number;
  bytes: number;
  /** Lines (elements sent) of the batch. */
  lines: number;
  /** When the intake received the batch: RFC 3339, UTC, microseconds. `__ingest_ts` comes from it. */
  received: string;
}

export interface SegmentHeader {
  format: typeof SEGMENT_FORMAT;
  sink: string;
  segment: string;
  batches: SegmentEntry[];
}

/** One batch to place in a segment. */
export interface SegmentBatch {
  id: string;
  ndjson: Uint8Array;
  lines: number;
  received: string;
}

/** A segment laid out for one PUT, and where each batch sits in the object. */
export interface EncodedSegment {
  /** The object's bytes in order (the header, then each batch and its newline where missing), to send without a copy. */
  parts: Uint8Array[];
  size: number;
  header: SegmentHeader;
  /** Where each batch's bytes start in the object (header included), in the order given. */
  objectOffsets: number[];
}

const NEWLINE = Buffer.from('\n');

/**
 * A new segment id: the time in base 36 (so keys sort roughly by age) and 48 random bits.
 * Ids are never reused, so an object under one is always the same segment.
 */
export function newSegmentId(now = Date.now()): string {
  return `${now.toString(36).padStart(9, '0')}-${randomBytes(6).toString('hex')}`;
}

const SEGMENT_ID = /^[0-9a-z]{9}-[0-9a-f]{12}$/;

export const segmentKey = (sinkId: string, segmentId: string) => `${sinkPrefix(sinkId)}${segmentId}${SEGMENT_SUFFIX}`;

/** The segment id of a key directly under the sink's prefix, or undefined for any other key. */
export function segmentIdOfKey(sinkId: string, key: string): string | undefined {
  const prefix = sinkPrefix(sinkId);
  if (!key.startsWith(prefix) || !key.endsWith(SEGMENT_SUFFIX)) return undefined;
  const id = key.slice(prefix.length, -SEGMENT_SUFFIX.length);
  return SEGMENT_ID.test(id) ? id : undefined;
}

export function encodeSegment(sinkId: string, segmentId: string, batches: readonly SegmentBatch[]): EncodedSegment {
  const entries: SegmentEntry[] = [];
  const bodies: Uint8Array[] = [];
  let offset = 0;
  for (const b of batches) {
    entries.push({ id: b.id, offset, bytes: b.ndjson.byteLength, lines: b.lines, received: b.received });
    bodies.push(b.ndjson);
    offset += b.ndjson.byteLength;
    // Every batch ends its last line, so the bytes after the header read as NDJSON too.
    if (b.ndjson.byteLength === 0 || b.ndjson[b.ndjson.byteLength - 1] !== 0x0a) {
      bodies.push(NEWLINE);
      offset += 1;
    }
  }
  const header: SegmentHeader = { format: SEGMENT_FORMAT, sink: sinkId, segment: segmentId, batches: entries };
  const headerBytes = Buffer.from(`${JSON.stringify(header)}\n`, 'utf8');
  return {
    parts: [headerBytes, ...bodies],
    size: headerBytes.byteLength + offset,
    header,
    objectOffsets: entries.map((e) => headerBytes.byteLength + e.offset),
  };
}

/** A segment read back: its header and each batch's bytes (views of the object, no copies). */
export interface DecodedSegment {
  header: SegmentHeader;
  batch(entry: SegmentEntry): Buffer;
}

export class SegmentFormatError extends Error {
  override readonly name = 'SegmentFormatError';
}

const BATCH_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Reads a segment's header and checks it against the object: its format, its sink and id, and
 * every entry's id, time and bounds (inside the object, in order, not overlapping, ids unique).
 * Anything else is a SegmentFormatError: nothing of such an object can be trusted.
 */
export function decodeSegment(object: Buffer, expected: { sink: string; segment: string }): DecodedSegment {
  const end = object.indexOf(0x0a);
  if (end < 0) throw new SegmentFormatError('no header line');
  let header: SegmentHeader;
  try {
    header = JSON.parse(object.subarray(0, end).toString('utf8')) as SegmentHeader;
  } catch {
    throw new SegmentFormatError('the header is not JSON');
  }
  if (header?.format !== SEGMENT_FORMAT) throw new SegmentFormatError(`the format is not ${SEGMENT_FORMAT}`);
  if (header.sink !== expected.sink || header.segment !== expected.segment) throw new SegmentFormatError('the header names another sink or segment');
  if (!Array.isArray(header.batches) || header.batches.length === 0) throw new SegmentFormatError('the header lists no batch');
  const body = object.subarray(end + 1);
  const seen = new Set<string>();
  let floor = 0;
  for (const e of header.batches) {
    const ok =
      typeof e?.id === 'string' && BATCH_ID.test(e.id) && !seen.has(e.id) &&
      Number.isSafeInteger(e.offset) && Number.isSafeInteger(e.bytes) && Number.isSafeInteger(e.lines) &&
      e.offset >= floor && e.bytes >= 0 && e.lines >= 0 && e.offset + e.bytes <= body.byteLength &&
      typeof e.received === 'string' && RECEIVED_STAMP.test(e.received);
    if (!ok) throw new SegmentFormatError(`entry ${seen.size + 1} of the header is malformed or out of bounds`);
    seen.add(e.id);
    floor = e.offset + e.bytes;
  }
  return { header, batch: (entry) => body.subarray(entry.offset, entry.offset + entry.bytes) };
}
