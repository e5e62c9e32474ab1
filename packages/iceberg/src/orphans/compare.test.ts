import { describe, expect, it } from 'vitest';
import { compareFiles, fileUri } from './compare.ts';

const T = 's3://bucket/ns/events';
const OLD = 1_000;
const CUTOFF = 2_000;
const file = (location: string, lastModified = OLD) => ({ location, lastModified, size: 10 });
const options = { tableLocation: T, olderThan: CUTOFF, partitionNames: ['__ingest_ts_day'] };

describe('fileUri', () => {
  it('folds equal schemes and repeated slashes, as Java compares paths', () => {
    expect(fileUri('s3a://bucket//ns/events/data/a.parquet')).toEqual({ scheme: 's3', authority: 'bucket', path: '/ns/events/data/a.parquet' });
    expect(fileUri('/ns/events/a')).toEqual({ scheme: null, authority: null, path: '/ns/events/a' });
  });
});

describe('compareFiles', () => {
  it('finds old unreferenced files only, and counts the young ones', () => {
    const listed = [file(`${T}/data/live.parquet`), file(`${T}/data/orphan.parquet`), file(`${T}/data/young.parquet`, CUTOFF)];
    const result = compareFiles(listed, [`${T}/data/live.parquet`], options);
    expect(result.orphans.map((f) => f.location)).toEqual([`${T}/data/orphan.parquet`]);
    expect(result.young).toBe(1);
    expect(result.conflicts).toEqual([]);
  });

  it('matches a reference written with another s3 scheme or doubled slashes', () => {
    const result = compareFiles([file(`${T}/data/a.parquet`)], ['s3a://bucket/ns//events/data/a.parquet'], options);
    expect(result.orphans).toEqual([]);
    expect(result.conflicts).toEqual([]);
  });

  it('reports a path referenced under another bucket as a conflict, never an orphan', () => {
    const result = compareFiles([file(`${T}/data/a.parquet`)], ['s3://other/ns/events/data/a.parquet'], options);
    expect(result.orphans).toEqual([]);
    expect(result.conflicts).toEqual([{ listed: `${T}/data/a.parquet`, referenced: 's3://other/ns/events/data/a.parquet' }]);
  });

  it('leaves hidden paths alone, but not partition directories whose field starts with _', () => {
    const listed = [
      file(`${T}/_sink/snk_000000000001/b.ndjson`),
      file(`${T}/data/.a.parquet.crc`),
      file(`${T}/data/_SUCCESS`),
      file(`${T}/data/__ingest_ts_day=2026-12-01/x.parquet`),
      file(`${T}/data/_other=1/y.parquet`),
    ];
    expect(compareFiles(listed, [], options).orphans.map((f) => f.location)).toEqual([`${T}/data/__ingest_ts_day=2026-12-01/x.parquet`]);
  });

  it('never takes a file of a sibling table whose name extends this one, nor an excluded prefix', () => {
    const listed = [file('s3://bucket/ns/events2/data/a.parquet'), file(`${T}/keep/a.parquet`), file(`${T}/data/b.parquet`)];
    const result = compareFiles(listed, [], { ...options, excludedPrefixes: [`${T}/keep/`] });
    expect(result.orphans.map((f) => f.location)).toEqual([`${T}/data/b.parquet`]);
  });
});
