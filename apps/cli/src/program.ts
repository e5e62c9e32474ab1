import { Command, CommanderError } from 'commander';
import { ApiClient } from './api-client.ts';
import { addConnect } from './commands/connect.ts';
import { addTableCreate } from './commands/table-create.ts';
import { addTableList } from './commands/table-list.ts';
import { resolveApiConfig } from './config.ts';
import type { CommandContext } from './context.ts';
import { CliError, exitCodeHelp, usageError } from './errors.ts';
import { type Io, Output } from './output.ts';

export interface RunOptions {
  /** Arguments after the program name. */
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly io: Io;
}

interface GlobalFlags {
  apiUrl?: string;
  apiKey?: string;
}

/** Runs one invocation and answers its exit code; nothing here exits the process. */
export async function run({ argv, env, cwd, io }: RunOptions): Promise<number> {
  const out = new Output(io);
  const context: CommandContext = {
    out,
    api: (command) => new ApiClient(resolveApiConfig({ flags: command.optsWithGlobals<GlobalFlags>(), env, cwd })),
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
    .description('Create Iceberg tables and connect engines to them through the tablemere API.')
    .option('--api-url <url>', 'tablemere API URL (default: $TABLEMERE_API_URL, then .stack/env)')
    .option('--api-key <key>', 'API key (default: $TABLEMERE_API_KEY, then .stack/env; prefer those, flags show in process lists)')
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

  const table = track(root.command('table').description('create and list tables in a catalog'));
  addTableCreate(table, context);
  addTableList(table, context);

  addConnect(root, context);
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
