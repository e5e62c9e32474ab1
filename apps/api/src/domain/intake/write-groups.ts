/**
 * Group commit for the send route's ledger writes. A write of one item costs a statement and
 * a commit (an fsync), and at a few hundred sends a second those dominate the database's
 * work. Here items that arrive while a group is being written wait and go together in the
 * next one: one statement and one commit for the whole group. An idle process writes a lone
 * item at once (after the current task: items submitted together, as a segment's claims are,
 * go in one group), so grouping adds no latency when there is nothing to group.
 */
export class WriteGroups<Item, Answer> {
  private queue: Array<{ item: Item; resolve: (answer: Answer) => void; reject: (error: unknown) => void }> = [];
  private writing = false;

  /**
   * `write` takes a group of items and answers one result per item, in their order; if it
   * throws, every item of the group fails with its error.
   */
  constructor(
    private readonly write: (items: Item[]) => Promise<Answer[]>,
    private readonly maxGroup: number,
  ) {}

  submit(item: Item): Promise<Answer> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.writing) {
        this.writing = true;
        queueMicrotask(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const group = this.queue.splice(0, this.maxGroup);
        try {
          const answers = await this.write(group.map((g) => g.item));
          for (const [i, { resolve }] of group.entries()) resolve(answers[i]!);
        } catch (error) {
          for (const { reject } of group) reject(error);
        }
      }
    } finally {
      this.writing = false;
    }
  }
}
