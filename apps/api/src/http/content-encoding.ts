import type { Hash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import zlib from 'node:zlib';
import { apiError, type ApiError } from '../errors.ts';
import type { BodyPool } from './body-pool.ts';

/** The codings a body may come in; `identity` is none. */
export const CONTENT_CODINGS = ['gzip', 'deflate', 'zstd', 'identity'] as const;
export type Coding = Exclude<(typeof CONTENT_CODINGS)[number], 'identity'>;

/** Output taken from a decompressor at a time: large enough that 16 MiB is a few hundred steps. */
const CHUNK_BYTES = 64 * 1024;

/**
 * zstd frames name the window their decoder must keep; one past 2^24 (16 MiB, more than any
 * body we take) is refused instead of allocated, so a crafted frame cannot ask for 2 GiB.
 */
const ZSTD_WINDOW_LOG_MAX = 24;

/**
 * The body's coding from its Content-Encoding, undefined for none (absent, empty, identity).
 * One coding at most: a list of two (compression inside compression) is refused like an
 * unknown coding, 415 unsupported_encoding naming the ones taken. `x-gzip` is gzip (RFC 9110).
 */
export function contentCoding(header: string | string[] | undefined): Coding | undefined {
  const codings = [header ?? ''].flat().join(',').split(',').map((part) => part.trim().toLowerCase()).filter((part) => part !== '' && part !== 'identity');
  if (codings.length === 0) return undefined;
  const [first] = codings;
  const coding = first === 'x-gzip' ? 'gzip' : first;
  if (codings.length > 1 || !(CONTENT_CODINGS as readonly string[]).includes(coding!)) {
    throw apiError('unsupported_encoding', {
      message: `Content-Encoding "${codings.join(', ')}" is not supported: send one of ${CONTENT_CODINGS.join(', ')} (a single coding, not one inside another), or no Content-Encoding.`,
      details: { supported: [...CONTENT_CODINGS] },
    });
  }
  return coding as Coding;
}

function decompressor(coding: Coding): zlib.Gunzip | zlib.Inflate | zlib.ZstdDecompress {
  if (coding === 'gzip') return zlib.createGunzip({ chunkSize: CHUNK_BYTES });
  if (coding === 'deflate') return zlib.createInflate({ chunkSize: CHUNK_BYTES });
  return zlib.createZstdDecompress({ chunkSize: CHUNK_BYTES, params: { [zlib.constants.ZSTD_d_windowLogMax]: ZSTD_WINDOW_LOG_MAX } });
}

export interface DecodedBody {
  bytes: Buffer;
  /** The bytes that came over the connection, compressed. */
  wireBytes: number;
}

export interface DecodeOptions {
  /** The most decoded bytes taken: past it, decoding stops at once and `tooLarge` is the answer. */
  limit: number;
  tooLarge: () => ApiError;
  /** Updated with every decoded byte as it comes out. */
  hash?: Hash | undefined;
  pool: BodyPool;
  /** The bytes already counted for this body in flight (its Content-Length's weight). */
  reserved: number;
  /**
   * Counts `bytes` more for this body in flight, or throws (503 intake_busy): called as the
   * decoded body outgrows what was counted, in doubling steps, so a small compressed body
   * weighs what it holds, not the whole limit, and a bomb weighs what it reached.
   */
  reserve: (bytes: number) => void;
}

/**
 * Reads a compressed body and decompresses it as it arrives, never more than `limit` decoded
 * bytes: a bomb (a gigabyte of zeros in a megabyte) is stopped after `limit` bytes of output,
 * having read about as much of the wire as made them. The decoded body is put in one buffer
 * from `pool` (give it back when done). A stream that does not decode, or ends early, is 400
 * invalid_compressed_body.
 */
export function readDecoded(payload: IncomingMessage, coding: Coding, options: DecodeOptions): Promise<DecodedBody> {
  const decoder = decompressor(coding);
  const chunks: Buffer[] = [];
  let decoded = 0;
  let wireBytes = 0;
  let reserved = options.reserved;
  let settled = false;
  return new Promise((resolve, reject) => {
    const stop = (error: ApiError) => {
      if (settled) return;
      settled = true;
      payload.removeListener('data', onWire);
      decoder.destroy();
      chunks.length = 0;
      // Drain what is still coming (the connection closes after the answer) instead of keeping it.
      payload.resume();
      reject(error);
    };
    const onWire = (chunk: Buffer) => {
      wireBytes += chunk.length;
      if (wireBytes > options.limit) return stop(options.tooLarge());
      decoder.write(chunk);
    };
    decoder.on('data', (chunk: Buffer) => {
      if (settled) return;
      decoded += chunk.length;
      if (decoded > options.limit) return stop(options.tooLarge());
      if (decoded > reserved) {
        const more = Math.min(options.limit, Math.max(2 * reserved, decoded)) - reserved;
        try {
          options.reserve(more);
        } catch (error) {
          return stop(error as ApiError);
        }
        reserved += more;
      }
      options.hash?.update(chunk);
      chunks.push(chunk);
    });
    decoder.once('error', (error: Error) => {
      const truncated = (error as { code?: string }).code === 'Z_BUF_ERROR';
      stop(
        apiError('invalid_compressed_body', {
          message: `The body is not a valid ${coding} stream (${truncated ? 'it ends before the stream does' : error.message}); send it again whole, or uncompressed.`,
          details: { content_encoding: coding },
        }),
      );
    });
    decoder.once('end', () => {
      if (settled) return;
      settled = true;
      const bytes = options.pool.take(decoded);
      let at = 0;
      for (const chunk of chunks) at += chunk.copy(bytes, at);
      resolve({ bytes, wireBytes });
    });
    payload.on('data', onWire);
    payload.once('end', () => decoder.end());
    payload.once('error', () => stop(aborted()));
    payload.once('close', () => {
      if (!payload.complete) stop(aborted());
    });
  });
}

export const aborted = () => apiError('client_aborted', { message: 'The connection closed before the body\'s end; nothing was stored: send it again.' });
