import { mallocTrimCall } from './native.ts';

/**
 * The call that hands the pages malloc holds free back to the system: glibc's `malloc_trim(0)`,
 * through an FFI, or undefined where there is no glibc to call. glibc keeps freed memory in its
 * heaps for reuse and gives back on its own only what lies at a heap's top, so after a flood of
 * request bodies most of what the flood touched stayed resident (research/42); the trim gives
 * back every whole free page of every arena, in a few ms. Called once after a burst
 * (memory-return.ts), never per request: reusing freed memory is what keeps large sends cheap.
 * glibc's malloc is kept rather than an allocator that gives pages back by itself (jemalloc),
 * which faults them in again for every large body (research/42).
 */
const trim = mallocTrimCall;
export const mallocTrim: (() => void) | undefined = trim ? () => void trim(0) : undefined;
