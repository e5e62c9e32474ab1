import type { Command } from 'commander';
import type { ApiClient } from '../api-client.ts';
import type { CommandContext } from '../context.ts';
import { CliError, usageError } from '../errors.ts';
import { serveMcp } from '../mcp/server.ts';
import { sinkIdOfTarget } from '../send-client.ts';
import { toolRefusal } from '../mcp/tool-results.ts';
import { sendTarget } from './sink-send.ts';

interface Options {
  sendKeyFile?: string;
}

export function addMcp(root: Command, context: CommandContext): void {
  root
    .command('mcp')
    .description('serve the sink tools to an agent host over stdio (Model Context Protocol)')
    .option('--send-key-file <file>', "the key file 'sink create --save' wrote: send_rows sends to its sink (else $TABLEMERE_SEND_KEY)")
    .addHelpText(
      'after',
      `
Started by an agent host, which talks to it on standard input and output (JSON-RPC); nothing
else is written to stdout, remarks go to stderr. Tools: list_sinks, describe_sink,
batch_status, tail_rows, read_rejects (with the API key: --api-key, $TABLEMERE_API_KEY or
.stack/env) and send_rows (with the send key, which is used on its sink's send route alone).
Either key will do; a tool whose key is missing answers an error saying so.

Host configuration (e.g. Claude Desktop's claude_desktop_config.json; a read-level API key is enough):
  {"mcpServers": {"tablemere": {
    "command": "node",
    "args": ["/path/to/tablemere/apps/cli/bin/tablemere.js", "mcp", "--send-key-file", "/home/me/events-sink.json"],
    "env": {"TABLEMERE_API_URL": "http://127.0.0.1:8787", "TABLEMERE_API_KEY": "tm_key_..."}}}}`,
    )
    .action(async (options: Options, command: Command) => {
      const { protocol } = context;
      if (protocol === undefined) throw new CliError('internal', 'tablemere mcp needs the process standard input and output');
      const wantsSend = options.sendKeyFile !== undefined || Boolean(context.env.TABLEMERE_SEND_KEY?.trim());
      const send = wantsSend
        ? await sendTarget(undefined, options, command, context)
        : toolRefusal('no_send_key', "send_rows needs a send key: tablemere mcp was started without --send-key-file or $TABLEMERE_SEND_KEY (an API key cannot send: the send route takes its sink's send key alone)");
      let api: ApiClient | CliError;
      try {
        api = context.api(command);
      } catch (error) {
        if (!(error instanceof CliError) || error.kind !== 'usage') throw error;
        if (!wantsSend) throw usageError(`tablemere mcp needs an API key or a send key (--send-key-file FILE or $TABLEMERE_SEND_KEY): ${error.message}`);
        api = toolRefusal('no_api_key', `the read tools need an API key; tablemere mcp was started without one (${error.message})`);
      }
      // A library printing on stdout would corrupt the protocol: console output goes to stderr.
      console.log = console.info = console.debug = console.error;
      const note = (line: string) => context.out.note(`tablemere mcp: ${line}`);
      const keys = [api instanceof CliError ? 'no API key' : 'the API key', send instanceof CliError ? 'no send key' : `the send key of ${sinkIdOfTarget(send)}`];
      note(`serving over stdio with ${keys.join(' and ')}`);
      await serveMcp({ api, send, note }, protocol.input, protocol.output);
    });
}

