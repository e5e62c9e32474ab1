/** Past this many sinks a cache starts over, so it cannot grow without bound. */
const MAX_ENTRIES = 10_000;

/**
 * Figures of a sink read from the database at most once per `freshMs` per process; concurrent
 * requests of one sink share one read. `read` gets the entry it replaces, to carry state over.
 */
export class SinkCache<T extends { readAt: number }> {
  private readonly entries = new Map<string, T | Promise<T>>();

  constructor(
    private readonly freshMs: number,
    private readonly read: (sinkId: string, previous: T | undefined) => Promise<T>,
  ) {}

  async get(sinkId: string): Promise<T> {
    const cached = this.entries.get(sinkId);
    if (cached instanceof Promise) return cached;
    if (cached && Date.now() - cached.readAt < this.freshMs) return cached;
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    const reading = this.read(sinkId, cached);
    this.entries.set(sinkId, reading);
    try {
      const entry = await reading;
      this.entries.set(sinkId, entry);
      return entry;
    } catch (error) {
      this.entries.delete(sinkId);
      throw error;
    }
  }

  /** The sink's entry as read, if any (not one being read). */
  peek(sinkId: string): T | undefined {
    const entry = this.entries.get(sinkId);
    return entry instanceof Promise ? undefined : entry;
  }

  /** The next get reads again, unless `entry` was replaced already (another request is reading). */
  forget(sinkId: string, entry: T): void {
    if (this.entries.get(sinkId) === entry) this.entries.delete(sinkId);
  }
}
