import { describe, expect, it } from 'vitest';
import { batchLists, INLINE_BATCHES, SUMMARY_KEYS, sinkSummary, summaryBatchCounts, summaryBatchesFile, summaryBatchIds, summarySegmentIds } from './summary.ts';

describe('sink summary keys', () => {
  const batches = [
    { batch_id: '2026-09-21T12:00:00Z-0001', rows: 10, rejected_rows: 2 },
    { batch_id: 'a.b_c:d-e', rows: 0, rejected_rows: 5 },
  ];
  const summary = { operation: 'append', ...sinkSummary('snk_0123456789ab', batches, [], new Date('2026-09-21T12:05:00.123Z')) };

  it('carries the sink, the batches in order, their counts and the totals as strings', () => {
    expect(summary).toMatchObject({
      [SUMMARY_KEYS.id]: 'snk_0123456789ab',
      [SUMMARY_KEYS.batches]: '2026-09-21T12:00:00Z-0001,a.b_c:d-e',
      [SUMMARY_KEYS.batchRows]: '10:2,0:5',
      [SUMMARY_KEYS.rows]: '10',
      [SUMMARY_KEYS.rejectedRows]: '7',
      [SUMMARY_KEYS.rolledAt]: '2026-09-21T12:05:00.123Z',
    });
  });

  it('reads back what it wrote', () => {
    expect(summaryBatchIds(summary)).toEqual(batches.map((b) => b.batch_id));
    expect(summaryBatchCounts(summary)).toEqual(batches);
  });

  it('reads no batches from another writer and no counts from a malformed list', () => {
    expect(summaryBatchIds({ operation: 'append' })).toEqual([]);
    expect(summaryBatchCounts({ operation: 'append' })).toBeUndefined();
    expect(summaryBatchCounts({ ...summary, [SUMMARY_KEYS.batchRows]: '10:2' })).toBeUndefined();
    expect(summaryBatchCounts({ ...summary, [SUMMARY_KEYS.batchRows]: '10:2,x:1' })).toBeUndefined();
  });

  it('names a sidecar instead of the lists above 1,000 batches, and only then', () => {
    const many = Array.from({ length: INLINE_BATCHES + 1 }, (_, i) => ({ batch_id: `b${i}`, rows: 2, rejected_rows: 1 }));
    const file = 's3://intake/_sink/snk_0123456789ab/rolls/42.json';
    const big = sinkSummary('snk_0123456789ab', many, [], new Date('2026-09-21T12:05:00Z'), file);
    expect(big).not.toHaveProperty(SUMMARY_KEYS.batches);
    expect(big).not.toHaveProperty(SUMMARY_KEYS.batchRows);
    expect(big).toMatchObject({ [SUMMARY_KEYS.batchesFile]: file, [SUMMARY_KEYS.batchCount]: '1001', [SUMMARY_KEYS.rows]: '2002', [SUMMARY_KEYS.rejectedRows]: '1001' });
    expect(summaryBatchesFile(big)).toBe(file);
    // The sidecar holds the lists exactly as an inline summary would.
    expect(summaryBatchCounts(batchLists(many, []))).toEqual(many);
    expect(() => sinkSummary('snk_0123456789ab', many, [], new Date())).toThrow(/sidecar/);
    // At 1,000 batches and below, today's keys and nothing else, whatever is passed.
    const inline = sinkSummary('snk_0123456789ab', many.slice(0, INLINE_BATCHES), [], new Date(), file);
    expect(Object.keys(inline).sort()).toEqual(Object.keys(sinkSummary('snk_0123456789ab', batches, [], new Date())).sort());
    expect(summaryBatchesFile(inline)).toBeUndefined();
  });

  it('names the segments a roll took, inline up to 1,000 and in the sidecar above', () => {
    const segments = ['0mhq1b2c3-0123456789ab', '0mhq1b2c4-ba9876543210'];
    const withSegments = sinkSummary('snk_0123456789ab', batches, segments, new Date());
    expect(withSegments[SUMMARY_KEYS.segments]).toBe(segments.join(','));
    expect(summarySegmentIds(withSegments)).toEqual(segments);
    // A roll of batch objects alone carries no segment key; one from before segments reads as none.
    expect(summarySegmentIds(summary)).toEqual([]);
    expect(summary).not.toHaveProperty(SUMMARY_KEYS.segments);
    const many = Array.from({ length: INLINE_BATCHES + 1 }, (_, i) => `${String(i).padStart(9, '0')}-0123456789ab`);
    const file = 's3://intake/_sink/snk_0123456789ab/rolls/43.json';
    const big = sinkSummary('snk_0123456789ab', batches, many, new Date(), file);
    expect(big).not.toHaveProperty(SUMMARY_KEYS.segments);
    expect(summaryBatchesFile(big)).toBe(file);
    expect(summarySegmentIds(batchLists(batches, many))).toEqual(many);
    expect(() => sinkSummary('snk_0123456789ab', batches, many, new Date())).toThrow(/sidecar/);
  });
});
