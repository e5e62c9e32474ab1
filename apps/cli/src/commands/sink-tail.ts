import { PENDING_ROWS_DEFAULT, PENDING_ROWS_MAX, PendingRows } from '@tablemere/contracts';
import type { Command } from 'commander';
import { exactJson } from '../api-client.ts';
import { type CommandContext, sinkSegment } from '../context.ts';
import { usageError } from '../errors.ts';
import { ago, plural } from '../human.ts';
import { integerOption } from '../options.ts';

interface Options {
  limit: number;
  json?: boolean;
}

export function addSinkTail(sink: Command, context: CommandContext): void {
  sink
    .command('tail')
    .description('show the newest rows waiting for the roll, without consuming them')
    .argument('<sink>', 'the sink name or id')
    .option('-n, --limit <n>', `how many rows, newest last (at most ${PENDING_ROWS_MAX})`, integerOption('--limit'), PENDING_ROWS_DEFAULT)
    .option('--json', "print the API's JSON answer")
    .action(async (ref: string, options: Options, command: Command) => {
      const path = `/v1/sinks/${sinkSegment(ref)}/pending`;
      if (options.limit < 1 || options.limit > PENDING_ROWS_MAX) throw usageError(`--limit: from 1 to ${PENDING_ROWS_MAX}`);
      const answer = await context.api(command).getExact(path, PendingRows, { limit: String(options.limit) });
      if (options.json) {
        context.out.lines([exactJson(answer.body, 2)]);
        return;
      }
      const pending = answer.value;
      const now = context.now();
      if (pending.rows.length === 0) {
        context.out.note('nothing waits for the roll');
        return;
      }
      context.out.note(
        `${plural(pending.rows_waiting, 'row')} in ${plural(pending.batches_waiting, 'batch', 'batches')} waiting; ` +
          `${pending.truncated ? `the newest ${pending.rows.length}` : 'all of them'}, oldest first:`,
      );
      context.out.lines(pending.rows.map((row) => `${row.batch_id}:${row.line}  (${ago(row.received_at, now)})  ${exactJson(row.row)}`));
    });
}
