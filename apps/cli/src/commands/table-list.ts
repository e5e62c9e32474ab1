import { IcebergName, TableList } from '@tablemere/contracts';
import type { Command } from 'commander';
import { type CommandContext, warehouseSegment } from '../context.ts';
import { usageError } from '../errors.ts';

interface Options {
  namespace?: string;
  json?: boolean;
}

export function addTableList(table: Command, context: CommandContext): void {
  table
    .command('list')
    .description("list a warehouse's tables")
    .argument('<warehouse>', 'the warehouse name (`tablemere warehouse list`)')
    .option('--namespace <namespace>', 'only the tables of this namespace')
    .option('--json', "print the API's JSON answer")
    .action(async (warehouse: string, options: Options, command: Command) => {
      const path = `/v1/warehouses/${warehouseSegment(warehouse)}/tables`;
      if (options.namespace !== undefined) {
        const namespace = IcebergName.safeParse(options.namespace);
        if (!namespace.success) throw usageError(`--namespace '${options.namespace}': ${namespace.error.issues[0]?.message ?? 'invalid'}`);
      }
      const answer = await context.api(command).get(path, TableList, { namespace: options.namespace });
      if (options.json) context.out.json(answer.body);
      // An empty list prints nothing on stdout, so scripts reading one table per line see none.
      else if (answer.value.tables.length === 0) context.out.note(`no tables in ${options.namespace ? `namespace ${options.namespace} of ` : ''}warehouse ${warehouse}`);
      else context.out.lines(answer.value.tables.map((ref) => ref.table));
    });
}
