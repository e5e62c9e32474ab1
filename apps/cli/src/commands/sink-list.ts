import { SinkList } from '@tablemere/contracts';
import type { Command } from 'commander';
import { type CommandContext, warehouseSegment } from '../context.ts';
import { sinkTable } from '../sink-view.ts';

interface Options {
  all?: boolean;
  stalled?: boolean;
  json?: boolean;
}

export function addSinkList(sink: Command, context: CommandContext): void {
  sink
    .command('list')
    .description("list the project's sinks, with what waits and when each last rolled")
    .argument('[warehouse]', "only this warehouse's sinks")
    .option('--all', 'include deleted sinks')
    .option('--stalled', 'only sinks whose rolls are failing (see `sink get` for why)')
    .option('--json', "print the API's JSON answer")
    .action(async (warehouse: string | undefined, options: Options, command: Command) => {
      if (warehouse !== undefined) warehouseSegment(warehouse);
      const answer = await context.api(command).get('/v1/sinks', SinkList, {
        warehouse,
        include_deleted: options.all ? 'true' : undefined,
        stalled: options.stalled ? 'true' : undefined,
      });
      if (options.json) context.out.json(answer.body);
      // An empty list prints nothing on stdout, so a script counting lines sees none.
      else if (answer.value.sinks.length === 0) context.out.note(`no ${options.stalled ? 'stalled ' : ''}sinks${warehouse ? ` in warehouse ${warehouse}` : ''}`);
      else context.out.lines(sinkTable(answer.value.sinks, context.now()));
    });
}
