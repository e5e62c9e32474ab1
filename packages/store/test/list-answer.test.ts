import { describe, expect, it } from 'vitest';
import { parseListAnswer } from '../src/list-answer.ts';

describe('parseListAnswer', () => {
  it('reads keys, sizes, times, tags, folders and the next token, entities decoded', () => {
    const xml =
      '<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix>_sink/s/</Prefix>' +
      '<KeyCount>3</KeyCount><MaxKeys>2</MaxKeys><Delimiter>/</Delimiter><IsTruncated>true</IsTruncated>' +
      '<Contents><Key>_sink/s/a&amp;b&lt;c&#233;&#x4E2D;.ndjson</Key><LastModified>2026-12-02T09:00:01.5Z</LastModified><ETag>&quot;0cc175b9&quot;</ETag><Size>17</Size><StorageClass>STANDARD</StorageClass></Contents>' +
      '<Contents><Key>_sink/s/IsTruncated.ndjson</Key><LastModified>2026-12-02T09:00:02Z</LastModified><ETag>"92eb5ffe"</ETag><Size>0</Size></Contents>' +
      '<CommonPrefixes><Prefix>_sink/s/rejects/</Prefix></CommonPrefixes><CommonPrefixes><Prefix>_sink/s/rolls/</Prefix></CommonPrefixes>' +
      '<NextContinuationToken>tok+en/=</NextContinuationToken></ListBucketResult>';
    expect(parseListAnswer(xml)).toEqual({
      objects: [
        { key: '_sink/s/a&b<cé中.ndjson', size: 17, etag: '0cc175b9', lastModified: new Date('2026-12-02T09:00:01.500Z') },
        { key: '_sink/s/IsTruncated.ndjson', size: 0, etag: '92eb5ffe', lastModified: new Date('2026-12-02T09:00:02Z') },
      ],
      prefixes: ['_sink/s/rejects/', '_sink/s/rolls/'],
      nextToken: 'tok+en/=',
    });
  });

  it('ends on a page that is not truncated, empty or not', () => {
    const empty = '<ListBucketResult><Name>b</Name><Prefix>x/</Prefix><KeyCount>0</KeyCount><IsTruncated>false</IsTruncated></ListBucketResult>';
    expect(parseListAnswer(empty)).toEqual({ objects: [], prefixes: [], nextToken: undefined });
    const last = '<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>k</Key><Size>1</Size></Contents><NextContinuationToken>stale</NextContinuationToken></ListBucketResult>';
    expect(parseListAnswer(last)).toEqual({ objects: [{ key: 'k', size: 1, etag: undefined, lastModified: undefined }], prefixes: [], nextToken: undefined });
  });
});
