// Preloaded into the roller process by the roll benchmark: reports its peak RSS and CPU time on exit.
import { writeSync } from 'node:fs';

process.on('exit', () => {
  const usage = process.resourceUsage();
  const cpuMs = (usage.userCPUTime + usage.systemCPUTime) / 1000;
  writeSync(2, `${JSON.stringify({ bench_max_rss_kib: usage.maxRSS, bench_cpu_ms: Math.round(cpuMs) })}\n`);
});
