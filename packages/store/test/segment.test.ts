import { describe, expect, it } from 'vitest';
import { decodeSegment, encodeSegment, newSegmentId, SegmentFormatError, segmentIdOfKey, segmentKey } from '../src/segment.ts';
import { batchIdOfKey, batchKey } from '../src/intake-layout.ts';

const sink = 'snk_0123456789ab';
const received = '2026-12-04T10:00:00.123456Z';
const batch = (id: string, text: string, lines = 1) => ({ id, ndjson: Buffer.from(text), lines, received });

describe('segments', () => {
  it('lays batches out after a header that finds each one again, byte for byte', () => {
    const segment = newSegmentId();
    const batches = [batch('a', '{"x":1}\n{"x":2}', 2), batch('b', '{"x":"日本"}\n'), batch('c', '3')];
    const encoded = encodeSegment(sink, segment, batches);
    const object = Buffer.concat(encoded.parts);
    expect(object.length).toBe(encoded.size);
    const decoded = decodeSegment(object, { sink, segment });
    expect(decoded.header.batches.map((e) => [e.id, e.lines, e.received])).toEqual([
      ['a', 2, received],
      ['b', 1, received],
      ['c', 1, received],
    ]);
    for (const [i, entry] of decoded.header.batches.entries()) {
      expect(decoded.batch(entry).equals(batches[i]!.ndjson)).toBe(true);
      // The object offsets (what the ledger keeps for a ranged read) point at the same bytes.
      const at = encoded.objectOffsets[i]!;
      expect(object.subarray(at, at + entry.bytes).equals(batches[i]!.ndjson)).toBe(true);
    }
    // After the header the object reads as NDJSON: every batch ends its last line.
    expect(object.subarray(object.indexOf(0x0a) + 1).toString()).toBe('{"x":1}\n{"x":2}\n{"x":"日本"}\n3\n');
  });

  it('has keys of their own, never taken for a batch object', () => {
    const id = newSegmentId(Date.UTC(2026, 11, 4));
    expect(id).toMatch(/^[0-9a-z]{9}-[0-9a-f]{12}$/);
    expect(segmentIdOfKey(sink, segmentKey(sink, id))).toBe(id);
    expect(batchIdOfKey(sink, segmentKey(sink, id))).toBeUndefined();
    expect(segmentIdOfKey(sink, batchKey(sink, id))).toBeUndefined();
    expect(segmentIdOfKey(sink, segmentKey('snk_ba9876543210', id))).toBeUndefined();
    // Ids sort by time.
    expect(newSegmentId(1_000) < newSegmentId(2_000)).toBe(true);
  });

  it('refuses a header it cannot trust', () => {
    const segment = newSegmentId();
    const good = Buffer.concat(encodeSegment(sink, segment, [batch('a', '{"x":1}'), batch('b', '{"x":2}')]).parts);
    const withHeader = (edit: (header: Record<string, any>) => void) => {
      const end = good.indexOf(0x0a);
      const header = JSON.parse(good.subarray(0, end).toString()) as Record<string, any>;
      edit(header);
      return Buffer.concat([Buffer.from(JSON.stringify(header)), good.subarray(end)]);
    };
    const refused = (object: Buffer, expected = { sink, segment }) => expect(() => decodeSegment(object, expected)).toThrow(SegmentFormatError);
    refused(Buffer.from('no header line'));
    refused(Buffer.from('not json\n{"x":1}\n'));
    refused(good, { sink: 'snk_ba9876543210', segment });
    refused(good, { sink, segment: newSegmentId() });
    refused(withHeader((h) => (h.format = 'other/1')));
    refused(withHeader((h) => (h.batches = [])));
    refused(withHeader((h) => (h.batches[1].id = 'a')));
    refused(withHeader((h) => (h.batches[1].id = 'a/b')));
    refused(withHeader((h) => (h.batches[1].bytes = 1_000)));
    refused(withHeader((h) => (h.batches[1].offset = 0)));
    refused(withHeader((h) => (h.batches[0].offset = -1)));
    refused(withHeader((h) => (h.batches[0].lines = 1.5)));
    refused(withHeader((h) => (h.batches[0].received = 'yesterday')));
    expect(decodeSegment(good, { sink, segment }).header.batches).toHaveLength(2);
  });
});
