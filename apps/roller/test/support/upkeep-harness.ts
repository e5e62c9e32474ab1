import type { CreatedSink } from '@tablemere/contracts';
import { branchHead, readManifestEntries, readManifestList, s3FileIOForTable, type LoadTableResult } from '@tablemere/iceberg';
import { expect } from 'vitest';
import { storeOptions } from '../../../../packages/iceberg/test/support.ts';
import { loadConfig } from '../../src/config.ts';
import { createRollDeps } from '../../src/deps.ts';
import { createLogger } from '../../src/log.ts';
import { RollerMetrics } from '../../src/metrics.ts';
import { rollSink } from '../../src/run-sink.ts';
import { createSink, createTable, send } from './api.ts';
import { expireLease, readBoth } from './expect.ts';
import { runCli } from './roller.ts';
import { suffix, type TestStack } from './stack.ts';

/**
 * A sink's table for upkeep tests: rolls through the roller's pipeline in this process, upkeep
 * as the operator command (its own process, so it can be killed), and the checks every upkeep
 * test makes: every row sent is in the table once, and the head's files.
 */
export class UpkeepTable {
  /** x of every row the sink committed. */
  readonly sentX: number[] = [];
  /** Rows another writer appended to the same table (x < 0). */
  otherRows = 0;
  private nextX = 0;
  private rolls = 0;

  private constructor(
    readonly stack: TestStack,
    readonly ns: string,
    readonly table: string,
    readonly sink: CreatedSink,
    private readonly deps: ReturnType<typeof createRollDeps>,
    /** Snapshots upkeep keeps. */
    readonly keep: number,
  ) {}

  /** A table of `x long required, who string` and its sink keeping `keep` snapshots of any age (`sinkOptions`: e.g. a partition). */
  static async create(stack: TestStack, ns: string, table: string, keep: number, sinkOptions: Record<string, unknown> = {}): Promise<UpkeepTable> {
    await createTable(stack, ns, table, [
      { name: 'x', type: 'long', required: true },
      { name: 'who', type: 'string' },
    ]);
    const sink = await createSink(stack, `upkeep_${suffix()}`, `${ns}.${table}`, { keep_snapshots: keep, min_snapshot_age_seconds: 0, ...sinkOptions });
    const deps = createRollDeps(loadConfig(stack.rollerEnv()), createLogger({ level: 'warn' }), new RollerMetrics({ processMetrics: false }));
    return new UpkeepTable(stack, ns, table, sink, deps, keep);
  }

  close(): void {
    this.deps.close();
  }

  /** Upkeep as a sink at the floor gets it, with time compressed (the sink sets no minimum snapshot age). */
  env(extra: Record<string, string> = {}): Record<string, string> {
    return this.stack.rollerEnv(extra);
  }

  /**
   * `count` rolls of one batch each (2 rows, `who` set on one and not the other, one more row
   * rejected): the roller's pipeline in this process, as the service runs it (the operator
   * command's own process costs seconds a roll; crash.test.ts covers it). `fields` gives both
   * rows more fields, by their x (a producer sending new fields).
   */
  async roll(count: number, fields: (x: number) => Record<string, unknown> = () => ({})): Promise<void> {
    const options = { rollerId: 'upkeep-test', leaseSeconds: 300, stop: new AbortController().signal };
    for (let i = 0; i < count; i++) {
      const [a, b] = [this.nextX++, this.nextX++];
      const rows = [{ ...fields(a), x: a, who: 'sink' }, { ...fields(b), x: b }, { who: 'no x: rejected' }];
      this.sentX.push(a, b);
      await send(this.stack, this.sink, `b-${++this.rolls}`, rows);
      const listed = (await this.deps.api.listSinks()).sinks.find((s) => s.id === this.sink.id)!;
      expect(await rollSink(this.deps, listed, options)).toMatchObject({ status: 'rolled', outcome: 'committed' });
    }
  }

  upkeep(extra: Record<string, string> = {}) {
    return runCli(['upkeep', this.sink.id], this.env(extra));
  }

  /** Every row the sink was sent is in the table once, beside the other writer's (x < 0). */
  /**
   * An upkeep run SIGKILLed at `point`, then the next run and the next roll: every row once, and
   * every live data file still there.
   */
  async killUpkeepAndRecover(point: string): Promise<void> {
    const killed = await this.upkeep({ TABLEMERE_ROLLER_CRASH_AT: point });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    await expireLease(this.stack, this.sink.id);
    const again = await this.upkeep();
    expect(again.code, again.stderr).toBe(0);
    await this.roll(1);
    await this.expectExactlyOnce();
    const loaded = await this.load();
    for (const file of await this.liveDataFiles(loaded)) expect(await this.exists(loaded, file.path)).toBe(true);
  }

  async expectExactlyOnce(): Promise<void> {
    const rows = await readBoth(this.stack, this.ns, this.table);
    const ours = rows.map((r) => Number(r.x)).filter((x) => x >= 0);
    expect(ours).toEqual([...this.sentX].sort((a, b) => a - b));
    expect(rows.length - ours.length).toBe(this.otherRows);
  }

  load(): Promise<LoadTableResult> {
    return this.stack.catalog.loadTable({ namespace: this.ns, name: this.table });
  }

  liveDataFiles(loaded: LoadTableResult): Promise<LiveFile[]> {
    return liveDataFiles(loaded);
  }

  async exists(loaded: LoadTableResult, location: string): Promise<boolean> {
    const io = s3FileIOForTable(loaded, storeOptions());
    try {
      return await io.exists(location);
    } finally {
      io.close();
    }
  }
}

export interface LiveFile {
  path: string;
  specId: number;
  /** The manifest's partition record (Avro form). */
  partition: Record<string, unknown>;
}

/** The data files live in the head snapshot, with the spec id of their manifest. */
export async function liveDataFiles(loaded: LoadTableResult): Promise<LiveFile[]> {
  const io = s3FileIOForTable(loaded, storeOptions());
  try {
    const head = branchHead(loaded.metadata);
    if (!head) return [];
    const files: LiveFile[] = [];
    for (const manifest of readManifestList(await io.get(head['manifest-list']))) {
      for (const entry of readManifestEntries(await io.get(manifest.manifest_path), manifest)) {
        if (entry.status !== 2) files.push({ path: entry.dataFile.file_path, specId: manifest.partition_spec_id, partition: entry.dataFile.partition });
      }
    }
    return files;
  } finally {
    io.close();
  }
}
