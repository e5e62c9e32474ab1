// Fuzzes the send route's C check under AddressSanitizer and UBSan for longer than `npm test`
// does: `npm run fuzz:scan -- --seconds 600 [--seed N] [--source changed-copy.c]`. An input
// that brings a report is kept in apps/api/native/build/fuzz-crashes/.
import { parseArgs } from 'node:util';
import { CRASHES, runFuzz } from '../apps/api/test/support/native-fuzz.ts';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '600' }, seed: { type: 'string' }, source: { type: 'string' } } });
const run = await runFuzz({
  seconds: Number(values.seconds),
  ...(values.seed ? { seed: Number(values.seed) } : {}),
  ...(values.source ? { source: values.source } : {}),
  echo: (chunk) => process.stdout.write(chunk),
});
if (run.status !== 0) {
  console.error(`fuzz: the driver exited with ${run.status ?? run.signal}; any input that brought a report is in ${CRASHES}`);
  process.exitCode = 1;
}
