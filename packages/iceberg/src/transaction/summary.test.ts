import { describe, expect, it } from 'vitest';
import { IcebergError } from '../errors.ts';
import { appendSummary, replaceSummary } from './summary.ts';

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

describe('replace summary', () => {
  const removed = { dataFiles: 20, records: 60n, filesSize: 40_000n };
  const rewritten = { dataFiles: 1, records: 60n, filesSize: 9_000n };

  it('counts what was added and deleted, and moves the totals by the difference', () => {
    const parent = { operation: 'append', 'total-data-files': '25', 'total-records': '100', 'total-files-size': '50000', 'total-delete-files': '0', 'total-position-deletes': '0', 'total-equality-deletes': '0' };
    expect(replaceSummary(parent, rewritten, removed, undefined, { 'app.job': 'j1' })).toEqual({
      'app.job': 'j1',
      operation: 'replace',
      'added-data-files': '1',
      'added-records': '60',
      'added-files-size': '9000',
      'deleted-data-files': '20',
      'deleted-records': '60',
      'removed-files-size': '40000',
      'changed-partition-count': '1',
      'total-data-files': '6',
      'total-records': '100',
      'total-files-size': '19000',
      'total-delete-files': '0',
      'total-position-deletes': '0',
      'total-equality-deletes': '0',
    });
  });

  it('takes the size total from counted live files when the parent lacks it', () => {
    const summary = replaceSummary({ operation: 'append' }, rewritten, removed, { dataFiles: 20n, records: 60n, deleteFiles: 0n, filesSize: 40_000n });
    expect(summary['total-files-size']).toBe('9000');
    expect(summary['total-data-files']).toBe('1');
    expect(summary['total-position-deletes']).toBeUndefined();
  });

  it('refuses caller properties that would overwrite its computed keys', () => {
    expect(() => replaceSummary(undefined, rewritten, removed, undefined, { 'deleted-records': '1' })).toThrow(IcebergError);
  });
});
