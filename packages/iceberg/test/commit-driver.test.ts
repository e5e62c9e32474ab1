import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  commitSchemaChange,
  commitWithRetries,
  currentSchema,
  IcebergError,
  RestCatalog,
  S3FileIO,
  type CommitAttempt,
  type CommitContext,
  type Landed,
  type TableIdent,
  type TableMetadata,
} from '../src/index.ts';
import { startFaultyProxy, type FaultOptions } from './faulty-proxy.ts';
import { catalogOptions, closeTestNamespace, openTestNamespace, uniqueName } from './support.ts';

const schema = { type: 'struct' as const, fields: [{ id: 1, name: 'id', required: true, type: 'long' }] };
const fastRetry = { attempts: 4, minBackoffMs: 10, maxBackoffMs: 50 };

/** What the driver returns in these tests: the table after, and how it got there. */
interface Outcome {
  metadata: TableMetadata;
  attempts: number;
  found: boolean;
}

/**
 * The driver with a non-snapshot commit (a table property, guarded by the current schema id),
 * on the real catalog behind a faulty proxy that loses commit answers.
 */
describe('commit driver on the real catalog', () => {
  const namespace = uniqueName('it_driver');
  let catalog: RestCatalog;
  let io: S3FileIO;
  let tableCount = 0;

  beforeAll(async () => ({ catalog, io } = await openTestNamespace(namespace)));
  afterAll(() => closeTestNamespace({ catalog, io }, namespace));

  async function newTable(): Promise<TableIdent> {
    const table = { namespace, name: `t${++tableCount}` };
    await catalog.createTable(namespace, table.name, { schema });
    return table;
  }

  /** Sets `marker` to `value` unless it is already set, through the driver behind a proxy with `faults`. */
  async function setMarker(
    table: TableIdent,
    value: string,
    faults: FaultOptions,
    options: { landed?: (metadata: TableMetadata) => Landed; files?: (context: CommitContext) => Promise<Pick<CommitAttempt<Outcome>, 'references' | 'ownFiles'>>; rival?: () => Promise<void> } = {},
  ): Promise<{ outcome: Outcome; stats: { commitsForwarded: number; answersDropped: number } }> {
    const proxy = await startFaultyProxy(catalogOptions().uri, faults);
    if (options.rival) proxy.beforeNextCommit(options.rival);
    try {
      const flaky = await RestCatalog.connect({ ...catalogOptions(), uri: proxy.uri });
      const outcome = await commitWithRetries<Outcome>({
        catalog: flaky,
        table,
        io,
        operation: 'property change',
        formatVersions: [2],
        retry: fastRetry,
        build: async (context) => {
          const { metadata } = context;
          if (metadata.properties?.marker === value) return { nothingToDo: { metadata, attempts: 0, found: false } };
          return {
            requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': metadata['current-schema-id'] }],
            updates: [{ action: 'set-properties', updates: { marker: value } }],
            ...(await options.files?.(context)),
            landed: options.landed ?? ((reloaded) => (reloaded.properties?.marker === value ? 'landed' : 'not_landed')),
            result: (after, attempts, found) => ({ metadata: after, attempts, found }),
          };
        },
      });
      return { outcome, stats: { ...proxy.stats } };
    } finally {
      await proxy.close();
    }
  }

  /** A small file under the table's metadata/ the build records as written. */
  async function writeFile(context: CommitContext, name: string): Promise<string> {
    const location = `${context.metadata.location}/metadata/driver-${name}.avro`;
    await io.put(location, new Uint8Array([1]));
    context.wrote(location);
    return location;
  }

  const rivalSchemaChange = (table: TableIdent, column: string) => async () => {
    await commitSchemaChange(catalog, table, (await catalog.loadTable(table)).metadata, { addColumns: [{ name: column, type: 'string' }] });
  };

  it('finds that a commit whose answer was lost after the catalog applied it landed, and does not commit it again', async () => {
    const table = await newTable();
    const { outcome, stats } = await setMarker(table, 'a', { dropAnswers: 1, forward: true });
    expect(outcome).toMatchObject({ attempts: 1, found: true });
    expect(stats).toEqual({ commitsForwarded: 1, answersDropped: 1 });
    expect((await catalog.loadTable(table)).metadata.properties?.marker).toBe('a');
  });

  it('finds that a commit whose answer was lost before it reached the catalog did not land, and commits it again', async () => {
    const table = await newTable();
    const { outcome, stats } = await setMarker(table, 'b', { dropAnswers: 1, forward: false });
    expect(outcome).toMatchObject({ attempts: 2, found: false });
    expect(stats).toEqual({ commitsForwarded: 1, answersDropped: 1 });
    expect((await catalog.loadTable(table)).metadata.properties?.marker).toBe('b');
  });

  it('reports commit_state_unknown when the table cannot tell, keeping what that attempt wrote', async () => {
    const table = await newTable();
    let written: string[] = [];
    const error = await setMarker(table, 'c', { dropAnswers: 1, forward: true }, {
      landed: () => 'unknown',
      files: async (context) => {
        written = [await writeFile(context, `unknown-${context.attempt}`)];
        return { references: written };
      },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IcebergError);
    expect((error as IcebergError).kind).toBe('commit_state_unknown');
    expect(await io.exists(written[0]!)).toBe(true);
    await io.delete(written[0]!);
  });

  it('rebuilds after a lost race on the new head, deleting what only the lost attempt referenced', async () => {
    const table = await newTable();
    const own: string[] = [];
    let shared = '';
    const { outcome, stats } = await setMarker(table, 'd', { dropAnswers: 0, forward: true }, {
      rival: rivalSchemaChange(table, 'rival'),
      files: async (context) => {
        shared ||= await writeFile(context, 'shared');
        own.push(await writeFile(context, `own-${context.attempt}`));
        return { references: [shared, own.at(-1)!], ownFiles: [own.at(-1)!] };
      },
    });
    expect(outcome).toMatchObject({ attempts: 2, found: false });
    expect(stats.commitsForwarded).toBe(2);
    const after = (await catalog.loadTable(table)).metadata;
    expect(currentSchema(after).fields.map((f) => f.name)).toEqual(['id', 'rival']);
    expect(after.properties?.marker).toBe('d');
    expect(await Promise.all([shared, ...own].map((l) => io.exists(l)))).toEqual([true, false, true]);
  });

  it('deletes everything an abandoned operation wrote', async () => {
    const table = await newTable();
    const written: string[] = [];
    const error = await setMarker(table, 'e', { dropAnswers: 0, forward: true }, {
      rival: rivalSchemaChange(table, 'other'),
      files: async (context) => {
        // The second attempt finds the table changed and gives up, as a rewrite's validation does.
        if (context.attempt > 1) throw new IcebergError('validation_failed', 'planned on another schema');
        written.push(await writeFile(context, 'abandoned-data'), await writeFile(context, 'abandoned-list'));
        return { references: written, ownFiles: [written[1]!] };
      },
    }).catch((e: unknown) => e);
    expect((error as IcebergError).kind).toBe('validation_failed');
    expect(await Promise.all(written.map((l) => io.exists(l)))).toEqual([false, false]);
  });
});
