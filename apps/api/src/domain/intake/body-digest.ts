import { createHash, type Hash } from 'node:crypto';
import { xxh3 } from '@node-rs/xxhash';
import { queryOne, type Queryable } from '@tablemere/db';
import { xxh3Call, type Xxh3Call } from '../../runtime/native.ts';
import type { BodyFormat } from './accept.ts';

/**
 * The ledger's body hash (DESIGN: a claim holds sink, batch id and body hash), which tells a
 * replay of a batch from another body sent under its id: XXH3-128 of the bytes as sent
 * (decoded), 16 bytes. Not a cryptographic hash, and it need not be one: the only body it is
 * ever compared with is a later send under the same sink's key and batch id, so a producer
 * who crafted a collision would only get its own earlier answer back for its own new body.
 * SHA-256 cost ~5 ms per 10 MB here (SHA-NI); XXH3 ~1 ms (research/42).
 *
 * The system's libxxhash (Debian's libxxhash0, which rsync depends on) through the FFI is
 * the fast one; where there is none, @node-rs/xxhash computes the same hash, ~6x slower.
 */
const hash128: (bytes: Uint8Array, seed: bigint) => Buffer = xxh3Call ? systemXxh3(xxh3Call) : packagedXxh3;

/** An NDJSON body and an array body are never the same batch, even when their bytes are: `[{"x":1}]` is a row as an array and a non-object as NDJSON. */
const FORMAT_SEEDS: Record<BodyFormat, bigint> = { array: 0n, ndjson: 1n };

/** Rows claimed before migration 0018 hold a SHA-256 of the body, which began with this for NDJSON. */
const NDJSON_SHA256_TAG = 'application/x-ndjson\n';

function canonical(high: bigint, low: bigint): Buffer {
  const out = Buffer.allocUnsafe(16);
  out.writeBigUInt64BE(high, 0);
  out.writeBigUInt64BE(low, 8);
  return out;
}

function systemXxh3(withSeed: Xxh3Call): (bytes: Uint8Array, seed: bigint) => Buffer {
  return (bytes, seed) => {
    const { low64, high64 } = withSeed(bytes, bytes.length, seed);
    return canonical(BigInt(high64), BigInt(low64));
  };
}

function packagedXxh3(bytes: Uint8Array, seed: bigint): Buffer {
  const value = xxh3.xxh128(bytes, seed);
  return canonical(value >> 64n, value & 0xffff_ffff_ffff_ffffn);
}

/** Which implementation hashes here, for the start line. */
export const bodyDigestImplementation = hash128 === packagedXxh3 ? '@node-rs/xxhash' : 'libxxhash';

/** The ledger digest of a decoded send body. */
export function bodyDigest(bytes: Uint8Array, format: BodyFormat): Buffer {
  return hash128(bytes, FORMAT_SEEDS[format]);
}

/** A body's hashes: the digest the ledger keeps, and the SHA-256 the rows of before 0018 hold, while any is left. */
export interface BodyHashes {
  digest: Buffer;
  sha256?: Buffer;
}

/** A SHA-256 to feed while the body arrives, begun as the rows of before 0018 began theirs. */
export function legacySha256(format: BodyFormat): Hash {
  const hash = createHash('sha256');
  if (format === 'ndjson') hash.update(NDJSON_SHA256_TAG);
  return hash;
}

/** Whether a ledger row's digest is of this body; unknown for a SHA-256 row when the body was not hashed that way. */
export function sameBody(stored: Buffer, body: BodyHashes): boolean | 'unknown' {
  if (stored.length !== 32) return stored.equals(body.digest);
  return body.sha256 ? stored.equals(body.sha256) : 'unknown';
}

/** How long a process trusts its last look for SHA-256 rows in the ledger. */
const LOOK_AGAIN_MS = 10 * 60 * 1000;

/**
 * Whether sends must also be hashed with SHA-256: while the ledger holds rows claimed before
 * migration 0018 (or by an API process of before it, during a rolling deploy), a replay of
 * one can only be recognised by that hash. Sends hash both ways until a look finds none left
 * (their days pruned, at most the replay window after the upgrade). A claim that meets such
 * a row unhashed says so (met), and the send is asked to come again.
 */
export class LegacyDigests {
  private needed: boolean;
  private lookedAt: number;
  private looking: Promise<void> | undefined;

  /** `known`: whether such rows are left, as the caller knows it now; without it, sends hash both ways until the first look. */
  constructor(
    private readonly db: Queryable,
    known?: boolean,
  ) {
    this.needed = known ?? true;
    this.lookedAt = known === undefined ? 0 : Date.now();
  }

  get sha256Needed(): boolean {
    if (Date.now() - this.lookedAt > LOOK_AGAIN_MS) void this.look();
    return this.needed;
  }

  /** A row of before 0018 was met by a send that had no SHA-256: hash both ways again. */
  met(): void {
    this.needed = true;
    this.lookedAt = Date.now();
  }

  /** Looks at the ledger now (once at a time); a failed look leaves things as they were and is tried again later. */
  look(): Promise<void> {
    this.looking ??= queryOne<{ left: boolean }>(this.db, 'SELECT EXISTS (SELECT 1 FROM sink_batches WHERE octet_length(body_digest) = 32) AS left')
      .then((row) => {
        this.needed = row?.left ?? true;
        this.lookedAt = Date.now();
      })
      .catch(() => {
        this.lookedAt = Date.now();
      })
      .finally(() => {
        this.looking = undefined;
      });
    return this.looking;
  }
}
