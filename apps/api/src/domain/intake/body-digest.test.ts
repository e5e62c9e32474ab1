import { randomBytes } from 'node:crypto';
import { xxh3 } from '@node-rs/xxhash';
import { describe, expect, it } from 'vitest';
import { bodyDigest, legacySha256, sameBody } from './body-digest.ts';

const hex = (value: bigint) => value.toString(16).padStart(32, '0');

describe('the ledger digest of a send body', () => {
  it('is XXH3-128 in its canonical bytes: the published value of the empty input', () => {
    expect(bodyDigest(Buffer.alloc(0), 'array').toString('hex')).toBe('99aa06d3014798d86001c324468d497f');
  });

  it('is what @node-rs/xxhash computes, for every length class of XXH3 and a 10 MB body', () => {
    for (const length of [1, 3, 16, 17, 128, 129, 240, 241, 1024, 64 * 1024 + 7, 10_000_000]) {
      const bytes = randomBytes(length);
      expect(bodyDigest(bytes, 'array').toString('hex'), `length ${length}`).toBe(hex(xxh3.xxh128(bytes, 0n)));
      expect(bodyDigest(bytes, 'ndjson').toString('hex'), `length ${length}`).toBe(hex(xxh3.xxh128(bytes, 1n)));
    }
  });

  it('tells an array body from an NDJSON body of the same bytes', () => {
    const bytes = Buffer.from('{"x":1}');
    expect(bodyDigest(bytes, 'array').equals(bodyDigest(bytes, 'ndjson'))).toBe(false);
  });

  it('compares a row of before 0018 by its SHA-256, and says unknown when the body has none', () => {
    const bytes = Buffer.from('{"x":1}\n');
    const sha256 = legacySha256('ndjson').update(bytes).digest();
    const hashes = { digest: bodyDigest(bytes, 'ndjson') };
    expect(sameBody(hashes.digest, hashes)).toBe(true);
    expect(sameBody(bodyDigest(bytes, 'array'), hashes)).toBe(false);
    expect(sameBody(sha256, hashes)).toBe('unknown');
    expect(sameBody(sha256, { ...hashes, sha256 })).toBe(true);
    expect(sameBody(sha256, { ...hashes, sha256: legacySha256('array').update(bytes).digest() })).toBe(false);
  });
});
