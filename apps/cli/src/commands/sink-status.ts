import { BatchId, BatchStatus } from '@tablemere/contracts';
import type { Command } from 'commander';
import { type CommandContext, sinkSegment } from '../context.ts';
import { usageError } from '../errors.ts';
import { plural, size, when } from '../human.ts';

interface Options {
  batch: string;
  json?: boolean;
}

export function addSinkStatus(sink: Command, context: CommandContext): void {
  sink
    .command('status')
    .description('say whether a batch landed: pending, committed (with its snapshot), rejected, discarded or unknown')
    .argument('<sink>', 'the sink name or id')
    .requiredOption('--batch <id>', "the batch id (the Idempotency-Key it was sent with; 'sink send' prints them)")
    .option('--json', "print the API's JSON answer")
    .action(async (ref: string, options: Options, command: Command) => {
      const batch = BatchId.safeParse(options.batch);
      if (!batch.success) throw usageError(`--batch '${options.batch}': ${batch.error.issues[0]?.message ?? 'invalid'}`);
      const path = `/v1/sinks/${sinkSegment(ref)}/batches/${encodeURIComponent(batch.data)}`;
      const answer = await context.api(command).get(path, BatchStatus);
      if (options.json) context.out.json(answer.body);
      else context.out.lines(describeStatus(answer.value, context.now()));
    });
}

function describeStatus(status: BatchStatus, now: Date): string[] {
  const head = `batch ${status.batch_id}: ${status.state}`;
  const received =
    status.received_at === null
      ? []
      : [`  received ${when(status.received_at, now)}${status.rows === null ? '' : `, ${plural(status.rows, 'row')}`}${status.bytes === null ? '' : `, ${size(status.bytes)}`}`];
  switch (status.state) {
    case 'pending':
      return [head, ...received, '  stored, waiting for the next roll'];
    case 'committed':
      return [
        head,
        ...received,
        `  in the table since ${status.committed_at === null ? 'its roll' : when(status.committed_at, now)}, snapshot ${status.snapshot_id ?? 'unknown'}`,
        ...(status.rejected_rows ? [`  ${plural(status.rejected_rows, 'row')} rejected by the roll (see: tablemere sink rejects)`] : []),
      ];
    case 'rejected':
      return [head, ...received, '  rolled, but every row was rejected (see: tablemere sink rejects)'];
    case 'discarded':
      return [head, ...received, '  the sink was deleted before this batch rolled; it never reached the table'];
    case 'unknown':
      return [head, '  never accepted, or rolled more than 7 days ago (the intake forgets batches 7 days after their roll)'];
  }
}
