import { describe, expect, it } from 'vitest';
import { bucketLocation } from './meter.ts';

describe('bucketLocation', () => {
  it('reads the bucket and the key prefix of an s3:// warehouse location', () => {
    expect(bucketLocation('s3://warehouse')).toEqual({ bucket: 'warehouse', prefix: '' });
    expect(bucketLocation('s3://warehouse/')).toEqual({ bucket: 'warehouse', prefix: '' });
    expect(bucketLocation('s3://my.bucket/tables/prod')).toEqual({ bucket: 'my.bucket', prefix: 'tables/prod/' });
    expect(bucketLocation('s3a://lake/x/')).toEqual({ bucket: 'lake', prefix: 'x/' });
  });

  it('refuses anything else', () => {
    for (const location of ['my_catalog', 'arn:aws:s3tables:us-east-1:123:bucket/lake', 'gs://bucket', 's3://', 's3://UPPER', 'https://bucket.s3.amazonaws.com']) {
      expect(bucketLocation(location), location).toBeUndefined();
    }
  });
});
