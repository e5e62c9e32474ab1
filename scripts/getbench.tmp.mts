const { createS3Client, ObjectStore } = await import('../packages/store/src/index.ts');
const env = process.env;
const client = createS3Client({ endpoint: env.AWS_ENDPOINT_URL!, region: env.AWS_REGION!, credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID!, secretAccessKey: env.AWS_SECRET_ACCESS_KEY! } });
const store = new ObjectStore(client, env.TABLEMERE_INTAKE_BUCKET!);
const N = 1000, SIZE = 65536;
const keys = Array.from({ length: N }, (_, i) => `bench-get/obj-${String(i).padStart(5, '0')}.ndjson`);
async function get(key: string): Promise<number> {
  const { head, body } = await store.get(key);
  if (head.metadata.received !== '2026-12-01T00:00:00Z' || head.size !== SIZE) throw new Error('head ' + JSON.stringify(head));
  const chunks: Buffer[] = []; for await (const c of body) chunks.push(c as Buffer); return Buffer.concat(chunks).length;
}
for (let r = 0; r < 3; r++) {
  const c0 = process.cpuUsage(); const t = performance.now(); let total = 0; let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => { while (next < N) { const n = await get(keys[next++]!); total += n; } }));
  const c = process.cpuUsage(c0);
  console.log('get wall', (performance.now() - t).toFixed(0), 'ms cpu', ((c.user + c.system) / 1000).toFixed(0), 'ms per get', ((c.user + c.system) / N / 1000).toFixed(3), total === N * SIZE ? 'ok' : 'BAD ' + total);
}
console.log('timers', process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length);
client.destroy();
