import v8 from 'node:v8';
import vm from 'node:vm';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { mallocTrim } from './malloc-trim.ts';

const MIB = 1024 * 1024;

describe('mallocTrim', () => {
  it('gives back the free pages glibc keeps between live buffers', async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const trim = mallocTrim;
    expect(trim).toBeTypeOf('function');
    // ~180 MiB of bodies below glibc's mmap threshold, one in ten still live afterwards: the
    // freed ones lie between live ones, where glibc's own trimming of a heap's top never reaches.
    const kept: Buffer[] = [];
    let bodies: Buffer[] | undefined = Array.from({ length: 3000 }, (_, i) => {
      const body = Buffer.alloc(60_000, 1);
      if (i % 10 === 0) kept.push(body);
      return body;
    });
    bodies = undefined;
    for (let i = 0; i < 2; i++) {
      gc();
      await sleep(300); // V8 frees the buffers' memory from a sweeper task after the collection
    }
    const before = process.memoryUsage.rss();
    trim!();
    const after = process.memoryUsage.rss();
    expect(bodies).toBeUndefined();
    expect(kept).toHaveLength(300);
    expect(before - after).toBeGreaterThan(100 * MIB);
  });
});
