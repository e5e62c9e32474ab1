// Preloaded into the roller process by the roll benchmark: reports its peak RSS and CPU time on
// exit, and with BENCH_CPU_SAMPLE_MS its CPU time every that many ms (for the CPU of each step).
import { writeSync } from 'node:fs';

const cpuMs = () => {
  const usage = process.resourceUsage();
  return (usage.userCPUTime + usage.systemCPUTime) / 1000;
};
const samples = [];
const every = Number(process.env.BENCH_CPU_SAMPLE_MS ?? 0);
if (every > 0) setInterval(() => samples.push([Date.now(), Math.round(cpuMs())]), every).unref();

process.on('exit', () => {
  const usage = process.resourceUsage();
  writeSync(2, `${JSON.stringify({ bench_max_rss_kib: usage.maxRSS, bench_cpu_ms: Math.round(cpuMs()) })}\n`);
  if (every > 0) writeSync(2, `${JSON.stringify({ bench_cpu_samples: samples })}\n`);
});
