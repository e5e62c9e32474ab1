import v8 from 'node:v8';

/**
 * Node hands every chunk of a request body to JavaScript as a new buffer outside the V8 heap.
 * By default V8 keeps a budget of its own for such memory, about 64 MiB over what was live
 * at the last full collection, and starts a full mark-compact of the whole heap when it is
 * spent: every few 10 MB sends, although the chunks are garbage as soon as they are copied.
 * Counted in the heap's global limit instead, that memory is collected at the heap's own
 * pace. That pace is set by how far the heap may grow past what the last collection kept;
 * V8 picks a factor from its collection speed, and on a busy 2-core machine that comes
 * out near 1.1, so a full collection of the ~40 MB heap still came every few large sends.
 * A fixed factor of 2 costs some tens of MiB of garbage held longer. Measured with
 * bench:intake (research/36). Imported first by start.ts, before anything is allocated.
 */
v8.setFlagsFromString('--external-memory-accounted-in-global-limit');
v8.setFlagsFromString('--heap-growing-percent=100');
