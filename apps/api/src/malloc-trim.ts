import { readFileSync } from 'node:fs';

/**
 * The malloc this process runs on, for the start line. jemalloc when whatever started the API
 * preloaded it (LD_PRELOAD, scripts/stack/allocator.ts; research/42): it gives the memory a
 * flood of bodies touched back to the system once freed. Otherwise the C library's malloc,
 * which works as well but keeps much of that memory resident.
 */
export function allocatorInUse(maps = readMaps()): { allocator: string; malloc_conf?: string } {
  if (/\/libjemalloc\.so/m.test(maps)) return { allocator: 'jemalloc', malloc_conf: process.env.MALLOC_CONF ?? 'jemalloc defaults' };
  return { allocator: 'system malloc (jemalloc not preloaded: after a flood of large bodies RSS may stay high; see the API README)' };
}

function readMaps(): string {
  try {
    return readFileSync('/proc/self/maps', 'utf8');
  } catch {
    return ''; // not Linux
  }
}
