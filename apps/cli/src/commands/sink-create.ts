import {
  CreatedSink,
  type CreateSinkInput,
  CreateSinkRequest,
  INACTIVITY_SECONDS_MIN,
  INFER_SAMPLE_MAX_ROWS,
  PARTITION_FIELDS_MAX,
  ROLL_BYTES_DEFAULT,
  ROLL_BYTES_MAX,
  ROLL_BYTES_MIN,
  ROLL_SECONDS_DEFAULT,
  ROLL_SECONDS_MAX,
  ROLL_SECONDS_MIN,
  type SinkTableRequest,
} from '@tablemere/contracts';
import type { Command } from 'commander';
import { type CommandContext, warehouseSegment } from '../context.ts';
import { usageError } from '../errors.ts';
import { size } from '../human.ts';
import { checkKeyDestination, type KeyDestination, keyFileOf, keyLines, PendingKeyFile, withoutKey } from '../key-file.ts';
import { integerOption, sizeOption } from '../options.ts';
import { type SettingOptions, settingOptions, settingsBody } from '../sink-settings.ts';
import { sinkTableFlag, type SinkTableOptions, sinkTableRequest } from '../sink-table.ts';
import { describeBatchIds, describeLinger, describeRetention, describeRoll, describeUnknownFields } from '../sink-view.ts';
import { tableLines } from '../table-view.ts';

interface Options extends KeyDestination, SinkTableOptions, SettingOptions {
  table: string;
  name: string;
  rollSeconds?: number;
  rollBytes?: number;
  inactivitySeconds?: number;
  partition?: string[];
  json?: boolean;
}

/** Each --partition adds fields; one may hold several, comma-separated (no transform has a comma). */
function partitionFields(text: string, previous: string[] = []): string[] {
  return [...previous, ...text.split(',').map((f) => f.trim()).filter((f) => f !== '')];
}

export function addSinkCreate(sink: Command, context: CommandContext): void {
  const command = sink
    .command('create')
    .description("create a sink: an HTTP intake for one table, with its send key (shown once: --save or --show-key)")
    .argument('<warehouse>', 'the warehouse holding the table (`tablemere warehouse list`)')
    .requiredOption('--table <ns.table>', 'the table, as <namespace>.<table>; it must exist, unless --column or --infer-from create it')
    .requiredOption('--name <name>', 'the sink name (unique in the project)')
    .option('--roll-seconds <n>', `commit what waits at least this often (default ${ROLL_SECONDS_DEFAULT}, at least ${ROLL_SECONDS_MIN})`, integerOption('--roll-seconds'))
    .option(
      '--roll-bytes <n>',
      `commit once this many bytes wait: bytes or e.g. 48MiB (${size(ROLL_BYTES_MIN)} to ${size(ROLL_BYTES_MAX)}, default ${size(ROLL_BYTES_DEFAULT)})`,
      sizeOption('--roll-bytes'),
    )
    .option(
      '--inactivity-seconds <n>',
      `commit early once no batch arrived for this long (at least ${INACTIVITY_SECONDS_MIN}; default: off)`,
      integerOption('--inactivity-seconds'),
    )
    .option('--column <name:type[:required]>', 'create the table with this column, as table create takes it; repeated for each one', (spec: string, specs: string[] = []) => [...specs, spec])
    .option('--infer-from <file>', `create the table with the columns inferred from sample rows (a JSON array or NDJSON, at most ${INFER_SAMPLE_MAX_ROWS}; not sent as data)`)
    .option(
      '--partition <fields>',
      'partition the table from the first roll: transform(column), e.g. "day(__ingest_ts)", bucket[N](c), truncate[W](c), identity(a.b), year/month/hour(c); repeat or comma-separate for several',
      partitionFields,
    );
  settingOptions(command, true)
    .option('--save <file>', 'write the send key, sink id and ingest URL to this file (mode 0600); print no key')
    .option('--show-key', 'print the send key, once (it cannot be shown again)')
    .option('--force', 'with --save: replace an existing file')
    .option('--json', "print the API's JSON answer, without the send key unless --show-key")
    .addHelpText(
      'after',
      `
A table its owner already partitioned keeps its spec (a --partition beside it must name the
same fields). The send key is answered once. Choose where it goes: --save FILE (what 'tablemere sink send
--send-key-file FILE' reads) or --show-key. Without either, nothing is created.

With --column or --infer-from the table is created first (it must not exist), then the sink;
if the sink cannot be created, the table is dropped again. Inferred types: integers long, other
numbers double, RFC 3339 date-times with a zone timestamptz, other strings string, booleans
boolean, objects struct, arrays list; every column optional. A field the sample cannot type
(mixed kinds, only nulls, only empty arrays) is named in the error: fix the sample, or give
--column. The sample rows are not stored: send them afterwards if they are data.

Examples:
  tablemere sink create garden --table garden.events --name events_in --save ~/events-sink.json
  tablemere sink create garden --table garden.readings --name readings_in \\
    --infer-from sample.ndjson --partition "day(__ingest_ts)" --save ~/readings-sink.json
  tablemere sink create garden --table garden.meters --name meters_in \\
    --partition "day(__ingest_ts)" --partition "bucket[16](device)" --save ~/meters-sink.json`,
    )
    .action(async (warehouse: string, options: Options, command: Command) => {
      // Everything is checked, and the key file claimed, before the API is called: a key the
      // API answers has to land somewhere, and it is never answered again.
      const request = createSinkRequest(warehouse, options, await sinkTableRequest(options));
      const keyFile = options.save === undefined ? undefined : PendingKeyFile.claim(options.save, options.force === true);
      let created: { value: CreatedSink; body: unknown };
      try {
        created = await context.api(command).post('/v1/sinks', request, CreatedSink);
      } catch (error) {
        keyFile?.abandon();
        throw error;
      }
      const sink = created.value;
      keyFile?.commit(keyFileOf(sink));

      if (options.json) {
        context.out.json(options.showKey ? created.body : withoutKey(created.body));
        return;
      }
      context.out.lines([
        ...(sink.created_table ? tableLines(sink.created_table, `created table ${sink.table}${sink.created_table.inferred ? ' with columns inferred from the sample' : ''}`) : []),
        `created sink ${sink.name} (${sink.id}) for ${sink.table} in warehouse ${sink.warehouse}`,
        `  ingest URL  ${sink.ingest_url}`,
        `  roll        ${describeRoll(sink.roll)}`,
        ...(sink.partition.length === 0 ? [] : [`  partition   ${sink.partition.join(', ')} (from the first roll)`]),
        ...(sink.unknown_fields === 'reject' ? [] : [`  new fields  ${describeUnknownFields(sink.unknown_fields)}`]),
        ...(sink.linger_ms === 0 ? [] : [`  intake      ${describeLinger(sink.linger_ms)}`]),
        ...(sink.batch_ids === 'key' ? [] : [`  batch ids   ${describeBatchIds(sink.batch_ids)}`]),
        `  snapshots   ${describeRetention(sink.upkeep)}`,
        ...keyLines(sink, keyFile, options.save),
      ]);
    });
}

/** The request body, checked against the API's own schema first (the body is its input form). */
function createSinkRequest(warehouse: string, options: Options, createTable: SinkTableRequest | undefined): CreateSinkInput {
  warehouseSegment(warehouse);
  checkKeyDestination(options, 'nothing was created');

  const body: CreateSinkInput = {
    name: options.name,
    table: options.table,
    warehouse,
    ...(options.rollSeconds !== undefined ? { roll_seconds: options.rollSeconds } : {}),
    ...(options.rollBytes !== undefined ? { roll_bytes: options.rollBytes } : {}),
    ...(options.inactivitySeconds !== undefined ? { inactivity_seconds: options.inactivitySeconds } : {}),
    ...(options.partition !== undefined ? { partition: options.partition } : {}),
    ...(createTable !== undefined ? { create_table: createTable } : {}),
    ...settingsBody(options),
  };
  const request = CreateSinkRequest.safeParse(body);
  if (request.success) return body;
  const issue = request.error.issues[0];
  const field = String(issue?.path[0]);
  const flag = field === 'create_table' ? sinkTableFlag(options) : (flags[field] ?? 'sink create');
  const range = ranges[field];
  const outOfRange = issue?.code === 'too_small' || issue?.code === 'too_big';
  throw usageError(`${flag}: ${outOfRange && range ? range : (issue?.message ?? 'invalid')}`);
}

const flags: Readonly<Record<string, string>> = {
  name: '--name',
  table: '--table',
  roll_seconds: '--roll-seconds',
  roll_bytes: '--roll-bytes',
  inactivity_seconds: '--inactivity-seconds',
  partition: '--partition',
};

const ranges: Readonly<Record<string, string>> = {
  roll_seconds: `at least ${ROLL_SECONDS_MIN} (the roller's floor), at most ${ROLL_SECONDS_MAX}`,
  roll_bytes: `from ${size(ROLL_BYTES_MIN)} (${ROLL_BYTES_MIN}) to ${size(ROLL_BYTES_MAX)} (${ROLL_BYTES_MAX})`,
  inactivity_seconds: `at least ${INACTIVITY_SECONDS_MIN} (the roller ticks every 10 s), at most ${ROLL_SECONDS_MAX}`,
  partition: `1 to ${PARTITION_FIELDS_MAX} fields`,
};
