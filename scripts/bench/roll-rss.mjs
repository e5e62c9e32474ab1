// Preloaded into the roller process by the roll benchmark: reports its peak RSS on exit.
import { writeSync } from 'node:fs';

process.on('exit', () => {
  writeSync(2, `${JSON.stringify({ bench_max_rss_kib: process.resourceUsage().maxRSS })}\n`);
});
