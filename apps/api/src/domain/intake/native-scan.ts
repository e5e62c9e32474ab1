import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import koffi from 'koffi';
import type { ScannedBatch } from './scan.ts';

/**
 * The send route's JSON check in C (apps/api/native/scan-array.c), for array bodies: ~5x
 * scanBatch's speed on a 10 MB batch, which is most of what the API spends on a large send
 * beyond a bare relay (research/42). `scripts/ensure-install.mjs` builds it where there is a C
 * compiler; where there is none, or TABLEMERE_NATIVE_JSON_CHECK=0, the JavaScript check runs
 * alone. It answers only for bodies it takes, byte for byte as scanBatch would; any other body
 * (a fault, not an array) goes to scanBatch, which names the fault.
 */
export const NATIVE_SCAN_LIBRARY = fileURLToPath(new URL('../../../native/build/libtmscan.so', import.meta.url));

/** out[] of tm_scan_array: first, write, objects, non-objects, then the indexes of non-objects. */
const OUT_INDEXES = 4;

type ScanArray = (body: Buffer, length: number, limit: number, out: Uint32Array) => number;
type NativeScan = (body: Buffer, reasonsLimit: number) => ScannedBatch | undefined;

/**
 * One of the library's entry points as a check: the body checked and packed in place as
 * scanBatch does, or undefined (body untouched) for scanBatch to look at. The body must be UTF-8.
 */
export function bindNativeScan(symbol: 'tm_scan_array' | 'tm_scan_array_baseline'): NativeScan | undefined {
  if (process.env.TABLEMERE_NATIVE_JSON_CHECK === '0' || !existsSync(NATIVE_SCAN_LIBRARY)) return undefined;
  let scanArray: ScanArray;
  try {
    scanArray = koffi.load(NATIVE_SCAN_LIBRARY).func(`int ${symbol}(_Inout_ uint8_t *body, size_t n, uint32_t limit, _Out_ uint32_t *out)`) as ScanArray;
  } catch {
    return undefined;
  }
  let out = new Uint32Array(OUT_INDEXES + 1000);
  return (body, reasonsLimit) => {
    if (out.length < OUT_INDEXES + reasonsLimit) out = new Uint32Array(OUT_INDEXES + reasonsLimit);
    if (scanArray(body, body.length, reasonsLimit, out) !== 1) return undefined;
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
