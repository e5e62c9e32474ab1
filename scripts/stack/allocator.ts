import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * jemalloc's settings for the API: a background thread gives freed pages back to the system
 * within `dirty_decay_ms` of their last use, with no request paying for it; glibc's malloc kept a
 * flood's freed buffers resident (research/42, where these were measured).
 */
export const JEMALLOC_CONF = 'background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0';

/**
 * Where scripts/ensure-install.mjs unpacks Debian's libjemalloc2; TABLEMERE_JEMALLOC names another
 * copy, or `off` for the C library's malloc (its trade: large sends cost less CPU, a flood's memory
 * stays resident; research/42).
 */
const jemallocLibrary = (root: string): string | undefined => {
  const chosen = process.env.TABLEMERE_JEMALLOC;
  if (chosen === 'off') return undefined;
  return chosen ?? path.join(root, '.venv', 'jemalloc', 'libjemalloc.so.2');
};

/**
 * What the API's environment needs to run on jemalloc (LD_PRELOAD, read by the dynamic loader at
 * process start, so the starter sets it). Nothing when the library is missing: the API then runs on
 * the C library's malloc and says so in its start line (a preload of a missing file would print a
 * loader error at every start).
 */
export function apiAllocatorEnv(root: string): Record<string, string> {
  const library = jemallocLibrary(root);
  if (library === undefined || !existsSync(library)) return {};
  return { LD_PRELOAD: [process.env.LD_PRELOAD, library].filter(Boolean).join(' '), MALLOC_CONF: JEMALLOC_CONF };
}
