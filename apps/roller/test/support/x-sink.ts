import type { CreatedSink } from '@tablemere/contracts';
import { createSink, createTable, send } from './api.ts';
import { startTestStack, suffix, type TestStack } from './stack.ts';

/**
 * One sink on a table `events (x long required, who string)` in a namespace of its own, and
 * every x it accepted, for the tests that kill rolls and then count each row once. Every batch
 * is two rows with fresh x values and one row the schema refuses.
 */
export class XSink {
  /** Every x accepted, in sending order. */
  readonly sentX: number[] = [];
  batchesSent = 0;
  private nextX = 0;

  private constructor(
    readonly ns: string,
    readonly sink: CreatedSink,
  ) {}

  static async create(stack: TestStack, name: string): Promise<XSink> {
    const ns = `${name}_${suffix()}`;
    await createTable(stack, ns, 'events', [
      { name: 'x', type: 'long', required: true },
      { name: 'who', type: 'string' },
    ]);
    return new XSink(ns, await createSink(stack, `${name}_${suffix()}`, `${ns}.events`));
  }

  /** Sends batch `id`: two rows with fresh x values (one tagged `who`) and one without x. */
  async send(stack: TestStack, id: string, who: string): Promise<void> {
    const xs = [this.nextX++, this.nextX++];
    this.sentX.push(...xs);
    await send(stack, this.sink, id, [{ x: xs[0], who }, { x: xs[1] }, { who: 'no x: rejected' }]);
    this.batchesSent++;
  }
}

/** A test stack and an XSink on it: a test file's beforeAll. */
export async function startXSink(name: string): Promise<{ stack: TestStack; x: XSink }> {
  const stack = await startTestStack();
  return { stack, x: await XSink.create(stack, name) };
}

/** Drops the XSink's namespace and stops the stack: the afterAll of startXSink. */
export async function stopXSink(stack: TestStack | undefined, x: XSink | undefined): Promise<void> {
  if (x) await stack?.dropNamespaces([x.ns]);
  await stack?.stop();
}
