/**
 * The operator commands: one roll, or one upkeep run, now, then exit. Same pipeline, lease
 * and reports as the service; the policy is not consulted for a named sink (that is the
 * point: drain it, or tidy its table, now), and a named sink rolls once, never back to back.
 * And a sink's roll intents, read-only. Run through bin/roller.js (`npx tablemere-roller`),
 * which puts them on the project's Node:
 *
 *   npx tablemere-roller roll <sink_id>
 *   npx tablemere-roller roll --all-due
 *   npx tablemere-roller upkeep <sink_id>
 *   npx tablemere-roller upkeep --all-due
 *   npx tablemere-roller intents <sink_id> [--state open|committed|empty|failed] [--limit N]
 *
 * Prints one JSON line per sink (per intent for `intents`). Exit codes: 0 every run finished
 * (a roll committed, empty or idle; an upkeep that committed or had nothing to do), 1 a run
 * failed, 2 bad usage or configuration (or no such sink), 3 another roller holds a lease.
 */
import { Command, CommanderError } from 'commander';
import { RollsQuery, SinkId, type InternalSink } from '@tablemere/contracts';
import { ConfigError, loadConfig } from './config.ts';
import { createRollDeps } from './deps.ts';
import { InternalApi, InternalApiError } from './internal-api.ts';
import { createLogger } from './log.ts';
import { RollerMetrics } from './metrics.ts';
import { rollSink, type SinkRollSummary, type SinkUpkeepSummary, summaryJson, upkeepSink } from './run-sink.ts';
import { upkeepDue } from './upkeep/policy.ts';

const EXIT = { ok: 0, failed: 1, usage: 2, busy: 3 } as const;

type Summary = SinkRollSummary | SinkUpkeepSummary;

function print(summary: Summary): void {
  process.stdout.write(`${JSON.stringify(summaryJson(summary))}\n`);
}

/** What each command runs on a sink, and (upkeep) which sinks `--all-due` means for it. */
const JOBS = {
  roll: {
    // Called without `again`: one roll per sink, never back to back.
    run: rollSink,
  },
  upkeep: {
    run: upkeepSink,
    // --all-due with upkeep off in the loop still means the hourly rule.
    due: (sink: InternalSink, now: Date, intervalSeconds: number) => upkeepDue(sink, now, intervalSeconds || 3600),
  },
} as const;

async function runJob(command: keyof typeof JOBS, sinkId: string | undefined, options: { allDue?: boolean }): Promise<number> {
  if ((sinkId === undefined) === !options.allDue) {
    process.stderr.write(`${command}: name one sink id, or pass --all-due\n`);
    return EXIT.usage;
  }
  if (sinkId !== undefined && !SinkId.safeParse(sinkId).success) {
    process.stderr.write(`${command}: no live sink ${sinkId} (a sink id is snk_ and 12 lowercase hex digits)\n`);
    return EXIT.usage;
  }
  const job = JOBS[command];
  const config = loadConfig(process.env);
  // Logs go to stderr: stdout carries the summaries.
  const log = createLogger({ level: config.logLevel, destination: process.stderr });
  const deps = createRollDeps(config, log, new RollerMetrics({ processMetrics: false }));
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const list = await deps.api.listSinks(sinkId !== undefined ? { sink: sinkId } : command === 'roll' ? { due: true } : {});
    if (!list.enabled) {
      process.stderr.write(`${command}: sinks are disabled on this API (TABLEMERE_SINKS_ENABLED=false); nothing to do\n`);
      return EXIT.ok;
    }
    let sinks: InternalSink[];
    if (sinkId !== undefined) {
      const [sink] = list.sinks;
      if (!sink) {
        process.stderr.write(`${command}: no live sink ${sinkId}\n`);
        return EXIT.usage;
      }
      sinks = [sink];
    } else if (command === 'roll') {
      // The API listed only the due ones: the roll policy is its alone.
      sinks = list.sinks;
    } else {
      const now = new Date(list.as_of);
      sinks = list.sinks.filter((s) => JOBS.upkeep.due(s, now, config.upkeep.intervalSeconds));
    }
    const summaries: Summary[] = [];
    let next = 0;
    const worker = async () => {
      while (next < sinks.length && !stop.signal.aborted) {
        const summary = await job.run(deps, sinks[next++]!, { rollerId: config.rollerId, leaseSeconds: config.leaseSeconds, stop: stop.signal });
        print(summary);
        summaries.push(summary);
      }
    };
    await Promise.all(Array.from({ length: Math.min(config.concurrency, sinks.length) }, worker));
    if (summaries.some((s) => s.status === 'failed')) return EXIT.failed;
    if (summaries.some((s) => s.status === 'busy')) return EXIT.busy;
    return EXIT.ok;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    deps.close();
  }
}

/** The sink's roll intents, newest first: an open one is a roll whose commit is not settled yet (see `intent_unresolved`). */
async function listIntents(sinkId: string, options: { state: string; limit: string }): Promise<number> {
  const query = RollsQuery.safeParse(options);
  if (!query.success) {
    process.stderr.write(`intents: --state is one of open, committed, empty, failed and --limit 1-1000 (${query.error.issues.map((i) => i.path.join('.')).join(', ')})\n`);
    return EXIT.usage;
  }
  const config = loadConfig(process.env);
  const api = new InternalApi({ url: config.api.url, secret: config.api.secret, ...(config.api.ca ? { ca: config.api.ca } : {}) });
  try {
    for (const intent of await api.listRolls(sinkId, query.data.state ?? 'open', query.data.limit)) process.stdout.write(`${JSON.stringify(intent)}\n`);
    return EXIT.ok;
  } catch (error) {
    if (!(error instanceof InternalApiError && error.kind === 'refused')) throw error;
    process.stderr.write(`intents: ${error.code === 'sink_not_found' ? `no sink ${sinkId}` : error.message}\n`);
    return EXIT.usage;
  }
}

async function main(argv: string[]): Promise<number> {
  let code: number = EXIT.ok;
  const program = new Command('tablemere-roller')
    .description('tablemere sink roller: operator commands')
    .exitOverride()
    .configureOutput({ writeErr: (text) => process.stderr.write(text) });
  program
    .command('roll')
    .description('roll one sink now (whatever its policy says), or every due sink once, then exit')
    .argument('[sink_id]', 'the sink to roll, snk_…')
    .option('--all-due', 'roll every sink whose policy says it is due')
    .action(async (sinkId: string | undefined, options: { allDue?: boolean }) => {
      code = await runJob('roll', sinkId, options);
    });
  program
    .command('upkeep')
    .description("tidy one sink's table now (compact small files, expire old snapshots, delete orphan files), or every sink due for it, then exit")
    .argument('[sink_id]', 'the sink whose table to tidy, snk_…')
    .option('--all-due', 'every sink whose table is due for upkeep')
    .action(async (sinkId: string | undefined, options: { allDue?: boolean }) => {
      code = await runJob('upkeep', sinkId, options);
    });
  program
    .command('intents')
    .description("list a sink's roll intents, newest first (an open one: a roll whose commit is not settled yet), then exit")
    .argument('<sink_id>', 'the sink, snk_…')
    .option('--state <state>', 'open, committed, empty or failed', 'open')
    .option('--limit <n>', 'at most this many (1-1000)', '100')
    .action(async (sinkId: string, options: { state: string; limit: string }) => {
      code = await listIntents(sinkId, options);
    });
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      return EXIT.usage;
    }
    throw error;
  }
  return code;
}

process.exitCode = await main(process.argv);
