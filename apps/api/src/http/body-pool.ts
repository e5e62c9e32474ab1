/**
 * Reused buffers for large send bodies. A fresh 10 MiB buffer per send costs page faults on
 * its first write and, worse, tells V8 that much more memory is in use, which brings on full
 * garbage collections of the whole heap; under a stream of large sends that was a tenth of
 * the route's CPU. Bodies of at least `minBytes` get a view of one of a few slabs instead,
 * taken back when the send is done. A view is exactly as long as the body and a body is
 * only used once every byte of it has arrived, so no byte of an earlier body is ever read.
 * Idle slabs are let go once no large body came for `releaseAfterMs`, so the memory a burst
 * (or a crowd of slow clients) touched is given back to the system at the next collection.
 */
export class BodyPool {
  private readonly free: ArrayBuffer[] = [];
  private release: NodeJS.Timeout | undefined;

  /**
   * @param slabBytes the largest body (the send limit): every slab has this size
   * @param keep how many idle slabs are kept (the memory held when nothing is sent)
   * @param minBytes bodies below this are allocated plainly: cheap, and a slab would waste memory
   * @param releaseAfterMs idle slabs are dropped after this long without a large body
   */
  constructor(
    private readonly slabBytes: number,
    private readonly keep: number,
    private readonly minBytes: number,
    private readonly releaseAfterMs = 10_000,
  ) {}

  /** A buffer of exactly `size` bytes, contents undefined; give it back when done. */
  take(size: number): Buffer {
    if (size < this.minBytes || size > this.slabBytes) return Buffer.allocUnsafe(size);
    const slab = this.free.pop() ?? new ArrayBuffer(this.slabBytes);
    return Buffer.from(slab, 0, size);
  }

  /** Returns a buffer from `take`; plainly allocated ones are left to the collector. */
  give(buffer: Buffer): void {
    const slab = buffer.buffer;
    if (slab.byteLength !== this.slabBytes || buffer.byteOffset !== 0 || !(slab instanceof ArrayBuffer)) return;
    if (this.free.length < this.keep && !this.free.includes(slab)) this.free.push(slab);
    clearTimeout(this.release);
    this.release = setTimeout(() => {
      this.free.length = 0;
    }, this.releaseAfterMs).unref();
  }

  /** Idle slabs held now. */
  get idle(): number {
    return this.free.length;
  }
}
