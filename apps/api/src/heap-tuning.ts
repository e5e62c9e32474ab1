import v8 from 'node:v8';

/**
 * Node hands every chunk of a request body to JavaScript as a new buffer outside the V8 heap.
 * By default V8 keeps a budget of its own for such memory, about 64 MiB over what was live
 * at the last full collection, and starts a full mark-compact of the whole heap when it is
 * spent: every few 10 MB sends, although the chunks are garbage as soon as they are copied.
 * Counted in the heap's global limit instead, that memory is collected at the heap's own
 * pace. Measured with bench:intake: 109-118 ms of API CPU per 10 MB send before, 87 ms
 * after (research/36). Imported first by start.ts, before anything is allocated.
 */
v8.setFlagsFromString('--external-memory-accounted-in-global-limit');
