import { run } from './program.ts';

// A closed pipe (`tablemere ... | head`) is not a failure worth a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});

process.exitCode = await run({
  argv: process.argv.slice(2),
  env: process.env,
  cwd: process.cwd(),
  io: {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  },
  stdin: () => process.stdin,
  protocol: { input: process.stdin, output: process.stdout },
  ...(process.stderr.isTTY ? { terminal: process.stderr } : {}),
});
