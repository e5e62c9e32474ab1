import { Command, CommanderError } from 'commander';
import cliPackage from '../package.json' with { type: 'json' };
import { ApiClient } from './api-client.ts';
import { addConnect } from './commands/connect.ts';
import { addMcp } from './commands/mcp.ts';
import { addSinkCreate } from './commands/sink-create.ts';
import { addSinkDelete } from './commands/sink-delete.ts';
import { addSinkGet } from './commands/sink-get.ts';
import { addSinkList } from './commands/sink-list.ts';
import { addSinkRejects } from './commands/sink-rejects.ts';
import { addSinkRotateKey } from './commands/sink-rotate-key.ts';
import { addSinkSend } from './commands/sink-send.ts';
import { addSinkStatus } from './commands/sink-status.ts';
import { addSinkTail } from './commands/sink-tail.ts';
import { addSinkUpdate } from './commands/sink-update.ts';
import { addTableCreate } from './commands/table-create.ts';
import { addTableList } from './commands/table-list.ts';
import { addWarehouse } from './commands/warehouse.ts';
import { resolveApiConfig, resolveApiUrl } from './config.ts';
import type { CommandContext } from './context.ts';
import { CliError, exitCodeHelp, usageError } from './errors.ts';
import { type Io, Output } from './output.ts';

export interface RunOptions {
  /** Arguments after the program name. */
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly io: Io;
  /** Standard input, for commands reading `-`; empty when not given. */
  readonly stdin?: () => AsyncIterable<Uint8Array>;
  /** The terminal behind stderr, when there is one: progress bars are drawn only there. */
  readonly terminal?: NodeJS.WriteStream;
  /** Standard input and output as streams, for `tablemere mcp`. */
  readonly protocol?: CommandContext['protocol'];
}

interface GlobalFlags {
  apiUrl?: string;
  apiKey?: string;
}

/** Runs one invocation and answers its exit code; nothing here exits the process. */
export async function run({ argv, env, cwd, io, stdin, terminal, protocol }: RunOptions): Promise<number> {
  const out = new Output(io);
  const context: CommandContext = {
    out,
    api: (command) => new ApiClient(resolveApiConfig({ flags: command.optsWithGlobals<GlobalFlags>(), env, cwd })),
    apiUrl: (command) => resolveApiUrl({ flags: command.optsWithGlobals<GlobalFlags>(), env, cwd }),
    env,
    stdin: stdin ?? (async function* () {}),
    protocol,
    terminal,
    now: () => new Date(),
  };
  const program = buildProgram(context, io);
  try {
    await program.root.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help that was asked for (`--help`, `help table`) ends with exit code 0.
      if (error.exitCode === 0) return 0;
      return out.failure(commanderUsage(error, program));
    }
    return out.failure(error);
  }
}

/** The command tree, and the deepest command the parser reached (for the missing-command line). */
interface Program {
  readonly root: Command;
  reached(): Command;
}

function buildProgram(context: CommandContext, io: Io): Program {
  const root = new Command('tablemere')
    .description('Create Iceberg tables, feed them JSON rows through sinks, and connect engines to them through the tablemere API.')
    .option('--api-url <url>', 'tablemere API URL (default: $TABLEMERE_API_URL, then .stack/env)')
    .option('--api-key <key>', 'API key (default: $TABLEMERE_API_KEY, then .stack/env; prefer those, flags show in process lists)')
    .version(cliPackage.version, '-V, --version', "print the release's version")
    .addHelpText('after', exitCodeHelp)
    // Commander's own errors come back as exceptions and are printed by `run`, on one line.
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout(text),
      writeErr: () => {},
      outputError: () => {},
    });

  // Commander answers a group called without a subcommand (`tablemere table`) with its help as
  // an error; remembering the deepest command reached lets `run` name it instead.
  let reached = root;
  const track = (group: Command): Command =>
    group.hook('preSubcommand', (_group, subcommand) => {
      reached = subcommand;
    });
  track(root);

  track(addWarehouse(root, context));

  const table = track(root.command('table').description("create and list tables in a warehouse's catalog"));
  addTableCreate(table, context);
  addTableList(table, context);

  const sink = track(root.command('sink').description('create sinks (an HTTP intake per table), send rows to them, and watch them roll'));
  addSinkCreate(sink, context);
  addSinkList(sink, context);
  addSinkGet(sink, context);
  addSinkUpdate(sink, context);
  addSinkSend(sink, context);
  addSinkStatus(sink, context);
  addSinkTail(sink, context);
  addSinkRejects(sink, context);
  addSinkRotateKey(sink, context);
  addSinkDelete(sink, context);

  addConnect(root, context);
  addMcp(root, context);
  return { root, reached: () => reached };
}

function commanderUsage(error: CommanderError, program: Program): CliError {
  if (error.code === 'commander.help') {
    const names: string[] = [];
    for (let c: Command | null = program.reached(); c; c = c.parent) names.unshift(c.name());
    return usageError(`missing command: run '${names.join(' ')} --help'`);
  }
  return usageError(error.message.replace(/^error:\s*/, ''));
}
