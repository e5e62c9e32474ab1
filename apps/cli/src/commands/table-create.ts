import { CreatedTable, CreateTableRequest, PRIMITIVE_TYPE_LIST } from '@tablemere/contracts';
import type { Command } from 'commander';
import { parseColumn } from '../columns.ts';
import { type CommandContext, warehouseSegment } from '../context.ts';
import { usageError } from '../errors.ts';
import { tableLines } from '../table-view.ts';

interface Options {
  namespace: string;
  name: string;
  column?: string[];
  json?: boolean;
}

export function addTableCreate(table: Command, context: CommandContext): void {
  table
    .command('create')
    .description('create an Iceberg table (its namespace is created when missing)')
    .argument('<warehouse>', 'the warehouse name (`tablemere warehouse list`)')
    .requiredOption('--namespace <namespace>', 'namespace of the table')
    .requiredOption('--name <name>', 'table name')
    .option('--column <name:type[:required]>', 'a column, repeated for each one in order', (spec: string, specs: string[] = []) => [...specs, spec])
    .option('--json', "print the API's JSON answer")
    .addHelpText(
      'after',
      `
Types: ${PRIMITIVE_TYPE_LIST}
Columns are optional unless marked :required. Quote types holding parentheses for the shell.

Example:
  tablemere table create garden --namespace garden --name events \\
    --column x:long:required --column who:string --column 'price:decimal(10,2)'`,
    )
    .action(async (warehouse: string, options: Options, command: Command) => {
      // Everything is checked before the API is called (and before its URL and key are needed).
      const path = `/v1/warehouses/${warehouseSegment(warehouse)}/tables`;
      const request = createTableRequest(options);
      const answer = await context.api(command).post(path, request, CreatedTable);
      if (options.json) context.out.json(answer.body);
      else context.out.lines(tableLines(answer.value));
    });
}

function createTableRequest(options: Options): CreateTableRequest {
  const specs = options.column ?? [];
  if (specs.length === 0) throw usageError('give at least one --column name:type[:required]');
  const request = CreateTableRequest.safeParse({
    namespace: options.namespace,
    name: options.name,
    columns: specs.map(parseColumn),
  });
  if (request.success) return request.data;

  // Name the flag the problem came from, the way the user wrote it.
  const issue = request.error.issues[0];
  const [field, index] = issue?.path ?? [];
  const given =
    field === 'namespace' ? `--namespace '${options.namespace}'`
    : field === 'name' ? `--name '${options.name}'`
    : field === 'columns' && typeof index === 'number' ? `--column '${specs[index]}'`
    : 'table create';
  throw usageError(`${given}: ${issue?.message ?? 'invalid'}`);
}
