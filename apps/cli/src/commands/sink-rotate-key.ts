import { KEY_OVERLAP_SECONDS_DEFAULT, KEY_OVERLAP_SECONDS_MAX, RotatedSendKey, type RotateSendKeyRequest } from '@tablemere/contracts';
import type { Command } from 'commander';
import { type CommandContext, sinkSegment } from '../context.ts';
import { parseDuration } from '../durations.ts';
import { usageError } from '../errors.ts';
import { span, when } from '../human.ts';
import { checkKeyDestination, type KeyDestination, keyFileOf, keyLines, PendingKeyFile, withoutKey } from '../key-file.ts';

interface Options extends KeyDestination {
  overlap?: string;
  finish?: boolean;
  json?: boolean;
}

/** `--overlap`: a duration (`24h`, `90m`), or 0 to stop the old key at once; at most 7 days. */
function overlapSeconds(text: string): number {
  const seconds = text.trim() === '0' ? 0 : parseDuration(text);
  if (seconds > KEY_OVERLAP_SECONDS_MAX) throw usageError(`--overlap '${text}': at most ${span(KEY_OVERLAP_SECONDS_MAX)} (7d)`);
  return seconds;
}

export function addSinkRotateKey(sink: Command, context: CommandContext): void {
  sink
    .command('rotate-key')
    .description("give a sink a new send key (shown once: --save or --show-key); the old key keeps working for the overlap")
    .argument('<sink>', 'the sink name or id')
    .option('--overlap <duration>', `how long the old key keeps working, e.g. 24h, 90m, 7d (at most); 0 stops it at once (default ${span(KEY_OVERLAP_SECONDS_DEFAULT)})`)
    .option('--finish', "stop the old key of an earlier rotation still in its overlap now, then rotate (otherwise that is refused)")
    .option('--save <file>', 'write the new send key, sink id and ingest URL to this file (mode 0600); print no key')
    .option('--show-key', 'print the new send key, once (it cannot be shown again)')
    .option('--force', 'with --save: replace an existing file')
    .option('--json', "print the API's JSON answer, without the send key unless --show-key")
    .addHelpText(
      'after',
      `
The new key is answered once, like 'sink create': --save FILE or --show-key. Without either,
nothing is rotated. Move every producer to the new key before the old one stops ('sink get'
says when). A leaked key: --overlap 0.

Example:
  tablemere sink rotate-key events_in --overlap 48h --save ~/events-sink.json --force`,
    )
    .action(async (ref: string, options: Options, command: Command) => {
      // Everything is checked, and the key file claimed, before the API is called: the new key
      // has to land somewhere, and it is never answered again.
      const path = `/v1/sinks/${sinkSegment(ref)}/send-key/rotate`;
      checkKeyDestination(options, 'nothing was rotated');
      const overlap = options.overlap === undefined ? undefined : overlapSeconds(options.overlap);
      const keyFile = options.save === undefined ? undefined : PendingKeyFile.claim(options.save, options.force === true);
      let rotated: { value: RotatedSendKey; body: unknown };
      try {
        const body: RotateSendKeyRequest = { overlap_seconds: overlap, finish: options.finish };
        rotated = await context.api(command).post(path, body, RotatedSendKey);
      } catch (error) {
        keyFile?.abandon();
        throw error;
      }
      const sink = rotated.value;
      keyFile?.commit(keyFileOf(sink), 'rotated');

      if (options.json) {
        context.out.json(options.showKey ? rotated.body : withoutKey(rotated.body));
        return;
      }
      const stops = sink.key_rotation.old_key_stops_at;
      context.out.lines([
        `rotated the send key of sink ${sink.name} (${sink.id})`,
        ...keyLines(sink, keyFile, options.save),
        stops === null
          ? '  old key     stopped now'
          : `  old key     works until ${when(stops, context.now())}; move every producer to the new key before then`,
      ]);
    });
}
