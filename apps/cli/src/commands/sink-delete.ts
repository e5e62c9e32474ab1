import { DeletedSink, Sink } from '@tablemere/contracts';
import type { Command } from 'commander';
import { type CommandContext, sinkSegment } from '../context.ts';
import { CliError } from '../errors.ts';
import { plural, size } from '../human.ts';

interface Options {
  discardPending?: boolean;
  json?: boolean;
}

export function addSinkDelete(sink: Command, context: CommandContext): void {
  sink
    .command('delete')
    .description('delete a sink: its send key stops working at once; the table and its rows stay')
    .argument('<sink>', 'the sink name or id')
    .option('--discard-pending', 'delete even though batches wait for the roll (they never reach the table)')
    .option('--json', "print the API's JSON answer")
    .action(async (ref: string, options: Options, command: Command) => {
      const path = `/v1/sinks/${sinkSegment(ref)}`;
      const api = context.api(command);
      if (!options.discardPending) {
        // The API deletes whatever waits; the CLI asks first, so accepted rows are not lost
        // by accident. A batch arriving between the two calls is discarded with the rest.
        const { lag, name } = (await api.get(path, Sink)).value;
        if (lag.batches_waiting > 0) {
          throw new CliError(
            'refused',
            `pending_batches: sink ${name} has ${plural(lag.batches_waiting, 'batch', 'batches')} (${size(lag.bytes_waiting)}) waiting for the roll; ` +
              `wait until 'tablemere sink get ${name}' shows nothing waiting, or pass --discard-pending to drop them`,
          );
        }
      }
      const answer = await api.delete(path, DeletedSink);
      if (options.json) {
        context.out.json(answer.body);
        return;
      }
      const deleted = answer.value;
      context.out.lines([
        `deleted sink ${deleted.name} (${deleted.id}); its send key no longer works, the table is untouched`,
        ...(deleted.pending_batches_discarded > 0 ? [`discarded ${plural(deleted.pending_batches_discarded, 'pending batch', 'pending batches')}`] : []),
      ]);
      if (!deleted.intake_cleared) {
        context.out.note(`some intake objects could not be removed yet; they stay under the sink's prefix and never reach the table`);
      }
    });
}
