import { Sink } from '@tablemere/contracts';
import type { Command } from 'commander';
import { type CommandContext, sinkSegment } from '../context.ts';
import { sinkDetails } from '../sink-view.ts';

interface Options {
  json?: boolean;
}

export function addSinkGet(sink: Command, context: CommandContext): void {
  sink
    .command('get')
    .description('show a sink: its table, roll policy, what waits, the last roll, the rejects and the last upkeep')
    .argument('<sink>', 'the sink name or id')
    .option('--json', "print the API's JSON answer")
    .action(async (ref: string, options: Options, command: Command) => {
      const answer = await context.api(command).get(`/v1/sinks/${sinkSegment(ref)}`, Sink);
      if (options.json) context.out.json(answer.body);
      else context.out.lines(sinkDetails(answer.value, context.now()));
    });
}
