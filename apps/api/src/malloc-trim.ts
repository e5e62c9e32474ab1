import koffi from 'koffi';

/**
 * The call that hands the pages malloc holds free back to the system: glibc's `malloc_trim(0)`,
 * through an FFI, or undefined where there is no glibc to call. glibc keeps freed memory in its
 * heaps for reuse and gives back on its own only what lies at a heap's top, so after a flood of
 * request bodies most of what the flood touched stayed resident (research/42); the trim gives
 * back every whole free page of every arena, in a few ms. Called once after a burst
 * (memory-return.ts), never per request: reusing freed memory is what keeps large sends cheap.
 * (jemalloc, run before instead, gave pages back by itself but faulted them in again for every
 * large body: ~5 ms more of CPU per 10 MB send.)
 */
export const mallocTrim: (() => void) | undefined = loadMallocTrim();

function loadMallocTrim(): (() => void) | undefined {
  try {
    const trim = koffi.load('libc.so.6').func('int malloc_trim(size_t pad)') as (pad: number) => number;
    return () => void trim(0);
  } catch {
    return undefined; // another C library, or no FFI binary for this platform
  }
}
