import { describe, expect, it } from 'vitest';
import { IcebergError } from '../errors.ts';
import { appendSummary } from './summary.ts';

const added = { dataFiles: 1, records: 10n, filesSize: 2048n };

describe('append summary', () => {
  it('starts every total from zero on an empty table', () => {
    expect(appendSummary(undefined, added, undefined, { 'app.batch': 'b1' })).toEqual({
      'app.batch': 'b1',
      operation: 'append',
      'added-data-files': '1',
      'added-records': '10',
      'added-files-size': '2048',
      'total-data-files': '1',
      'total-records': '10',
      'total-files-size': '2048',
      'total-delete-files': '0',
      'total-position-deletes': '0',
      'total-equality-deletes': '0',
    });
  });

  it('adds to the parent totals, beyond 2^53 exactly', () => {
    const parent = {
      operation: 'replace',
      'total-data-files': '4',
      'total-records': '9007199254740993',
      'total-files-size': '100',
      'total-delete-files': '2',
      'total-position-deletes': '7',
      'total-equality-deletes': '0',
      'app.batch': 'old',
    };
    const summary = appendSummary(parent, added, undefined);
    expect(summary['total-data-files']).toBe('5');
    expect(summary['total-records']).toBe('9007199254741003');
    expect(summary['total-files-size']).toBe('2148');
    expect(summary['total-delete-files']).toBe('2');
    expect(summary['total-position-deletes']).toBe('7');
    // The parent's own keys are not carried forward.
    expect(summary['app.batch']).toBeUndefined();
  });

  it('counts from the manifest list what a parent summary lacks, and omits what it cannot count', () => {
    const summary = appendSummary({ operation: 'append' }, added, { dataFiles: 3n, records: 30n, deleteFiles: 0n });
    expect(summary['total-data-files']).toBe('4');
    expect(summary['total-records']).toBe('40');
    expect(summary['total-delete-files']).toBe('0');
    expect(summary['total-files-size']).toBeUndefined();
    expect(summary['total-position-deletes']).toBeUndefined();
  });

  it('refuses caller properties that would overwrite computed keys', () => {
    expect(() => appendSummary(undefined, added, undefined, { 'total-records': '1' })).toThrow(IcebergError);
    expect(() => appendSummary(undefined, added, undefined, { operation: 'overwrite' })).toThrow(IcebergError);
  });
});
