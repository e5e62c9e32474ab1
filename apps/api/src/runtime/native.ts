import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import koffi from 'koffi';

/**
 * The C functions the API calls through koffi, each bound here once, or undefined where its
 * library is not on this machine. What each is for, and what runs without it, is with its
 * caller: malloc-trim.ts, domain/intake/body-digest.ts, domain/intake/native-scan.ts.
 */

function bound<T>(bind: () => T): T | undefined {
  try {
    return bind();
  } catch {
    return undefined; // not on this system, or no koffi binary for this platform
  }
}

/** glibc's `malloc_trim(pad)`. */
export const mallocTrimCall = bound(() => koffi.load('libc.so.6').func('int malloc_trim(size_t pad)') as (pad: number) => number);

/** libxxhash's `XXH3_128bits_withSeed` (Debian's libxxhash0, or a macOS build). */
export type Xxh3Call = (bytes: Uint8Array, length: number, seed: bigint) => { low64: number | bigint; high64: number | bigint };

export const xxh3Call: Xxh3Call | undefined = (() => {
  const Hash128 = koffi.struct('XXH128_hash_t', { low64: 'uint64_t', high64: 'uint64_t' });
  for (const name of ['libxxhash.so.0', 'libxxhash.dylib']) {
    const call = bound(() => koffi.load(name).func('XXH3_128bits_withSeed', Hash128, ['const uint8_t *', 'size_t', 'uint64_t']) as Xxh3Call);
    if (call) return call;
  }
  return undefined;
})();

/** The send route's JSON check in C (apps/api/native/scan-array.c), which scripts/ensure-install.mjs builds on x86_64 only. */
export const NATIVE_SCAN_LIBRARY = fileURLToPath(new URL('../../native/build/libtmscan.so', import.meta.url));

/** `tm_scan_array` and its twin: the body, its length, the nesting limit, the reasons limit, out[] and its length. */
export type ScanArrayCall = (body: Buffer, length: number, nesting: number, limit: number, out: Uint32Array, outLength: number) => number;

export function scanArrayCall(symbol: 'tm_scan_array' | 'tm_scan_array_baseline'): ScanArrayCall | undefined {
  if (process.arch !== 'x64' || !existsSync(NATIVE_SCAN_LIBRARY)) return undefined;
  return bound(
    () =>
      koffi
        .load(NATIVE_SCAN_LIBRARY)
        .func(`int ${symbol}(_Inout_ uint8_t *body, size_t n, uint32_t nesting, uint32_t limit, _Out_ uint32_t *out, size_t out_len)`) as ScanArrayCall,
  );
}
