import { Sink } from '@tablemere/contracts';
import type { Command } from 'commander';
import { type CommandContext, sinkSegment } from '../context.ts';
import { usageError } from '../errors.ts';
import { sinkDetails } from '../sink-view.ts';
import { type SettingOptions, settingOptions, settingsBody } from '../sink-settings.ts';

interface Options extends SettingOptions {
  json?: boolean;
}

export function addSinkUpdate(sink: Command, context: CommandContext): void {
  settingOptions(
    sink
      .command('update')
      .description("change a sink's settings (the others stay); the next roll or upkeep follows them")
      .argument('<sink>', 'the sink name or id'),
    false,
  )
    .option('--json', "print the API's JSON answer")
    .addHelpText(
      'after',
      `
Example:
  tablemere sink update events_in --keep-snapshots 168 --min-snapshot-age 1h
  tablemere sink update events_in --unknown-fields add_columns
  tablemere sink update logs_in --batch-ids content`,
    )
    .action(async (ref: string, options: Options, command: Command) => {
      const path = `/v1/sinks/${sinkSegment(ref)}`;
      const body = settingsBody(options);
      if (Object.keys(body).length === 0) throw usageError('sink update: give at least one setting to change (--keep-snapshots, --min-snapshot-age, --unknown-fields, --linger-ms, --batch-ids)');
      const answer = await context.api(command).patch(path, body, Sink);
      if (options.json) context.out.json(answer.body);
      else context.out.lines(sinkDetails(answer.value, context.now()));
    });
}
