import { describe, expect, it } from 'vitest';
import { SUMMARY_KEYS, sinkSummary, summaryBatchCounts, summaryBatchIds } from './summary.ts';

describe('sink summary keys', () => {
  const batches = [
    { batch_id: '2026-09-21T12:00:00Z-0001', rows: 10, rejected_rows: 2 },
    { batch_id: 'a.b_c:d-e', rows: 0, rejected_rows: 5 },
  ];
  const summary = { operation: 'append', ...sinkSummary('snk_0123456789ab', batches, new Date('2026-09-21T12:05:00.123Z')) };

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
});
