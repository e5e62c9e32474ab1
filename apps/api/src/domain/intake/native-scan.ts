import { SEND_NESTING_LIMIT, SEND_REASONS_LIMIT } from '@tablemere/contracts';
import { scanArrayCall } from '../../runtime/native.ts';
import type { ScannedBatch } from './scan.ts';

/**
 * The send route's JSON check in C (apps/api/native/scan-array.c), for array bodies: about half
 * of scanBatch's time on a 10 MB batch (7.7 against 15.0 ms through koffi), which is most of
 * what the API spends on a large send beyond a bare relay (research/42). `scripts/ensure-install.mjs`
 * builds it on x86_64 where there is a C compiler; on other CPUs, without a compiler, or with
 * TABLEMERE_NATIVE_JSON_CHECK=0, the JavaScript check runs alone. It answers only for bodies it
 * takes, byte for byte as scanBatch would; any other body (a fault, not an array) goes to
 * scanBatch, which names the fault.
 */

/** out[] of tm_scan_array: first, write, objects, non-objects, then the indexes of non-objects. */
const OUT_INDEXES = 4;

type NativeScan = (body: Buffer, reasonsLimit: number) => ScannedBatch | undefined;

/**
 * One of the library's entry points as a check: the body checked and packed in place as
 * scanBatch does, or undefined (body untouched) for scanBatch to look at. The body must be UTF-8.
 */
export function bindNativeScan(symbol: 'tm_scan_array' | 'tm_scan_array_baseline'): NativeScan | undefined {
  const scanArray = process.env.TABLEMERE_NATIVE_JSON_CHECK === '0' ? undefined : scanArrayCall(symbol);
  if (!scanArray) return undefined;
  let out = new Uint32Array(OUT_INDEXES + SEND_REASONS_LIMIT);
  return (body, reasonsLimit) => {
    if (out.length < OUT_INDEXES + reasonsLimit) out = new Uint32Array(OUT_INDEXES + reasonsLimit);
    if (scanArray(body, body.length, SEND_NESTING_LIMIT, reasonsLimit, out, out.length) !== 1) return undefined;
    const [first, write, objects, nonObjects] = out;
    return {
      ndjson: body.subarray(first, write),
      objects: objects!,
      nonObjects: nonObjects!,
      nonObjectIndexes: Array.from(out.subarray(OUT_INDEXES, OUT_INDEXES + Math.min(nonObjects!, reasonsLimit))),
    };
  };
}

/** The check for this CPU (AVX2 where it has it). */
const scanArray = bindNativeScan('tm_scan_array');

/** Which check the send route runs on array bodies, for the start line. */
export const jsonCheckImplementation = scanArray ? 'native' : 'javascript';

export function nativeScanArray(body: Buffer, reasonsLimit: number): ScannedBatch | undefined {
  return scanArray?.(body, reasonsLimit);
}
