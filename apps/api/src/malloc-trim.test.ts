import { describe, expect, it } from 'vitest';
import { allocatorInUse } from './allocator.ts';

describe('allocatorInUse', () => {
  it('names jemalloc when its library is mapped, else the system malloc', () => {
    const libc = '7f0e2c000000-7f0e2c028000 r--p 00000000 08:01 1234 /usr/lib/x86_64-linux-gnu/libc.so.6\n';
    const jemalloc = '7f0e2d000000-7f0e2d00b000 r--p 00000000 08:01 5678 /app/.venv/jemalloc/libjemalloc.so.2\n';
    expect(allocatorInUse(libc + jemalloc).allocator).toBe('jemalloc');
    expect(allocatorInUse(libc).allocator).toMatch(/^system malloc/);
  });
});
