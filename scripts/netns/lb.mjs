// A stand-in for the load balancer of docs/deploy.md, for the walkthrough only (research/52):
// round robin over the backends that answered GET /readyz 200 at the last check (every 2 s).
//   node scripts/netns/lb.mjs <listen host:port> <backend host:port>...
import http from 'node:http';

const [listen, ...backends] = process.argv.slice(2);
const healthy = new Set();
let next = 0;

async function check() {
  for (const b of backends) {
    try {
      const res = await fetch(`http://${b}/readyz`, { signal: AbortSignal.timeout(1500) });
      res.ok ? healthy.add(b) : healthy.delete(b);
    } catch {
      healthy.delete(b);
    }
  }
}
setInterval(check, 2000).unref();
await check();

const agent = new http.Agent({ keepAlive: true });
http
  .createServer((req, res) => {
    const pool = backends.filter((b) => healthy.has(b));
    if (pool.length === 0) return void res.writeHead(503).end('no backend ready\n');
    const b = pool[next++ % pool.length];
    const [host, port] = b.split(':');
    const up = http.request({ host, port, method: req.method, path: req.url, headers: { ...req.headers, 'x-forwarded-for': req.socket.remoteAddress }, agent }, (r) => {
      res.writeHead(r.statusCode ?? 502, { ...r.headers, 'x-backend': b });
      r.pipe(res);
    });
    up.on('error', () => res.headersSent || res.writeHead(502).end('backend failed\n'));
    req.pipe(up);
  })
  .listen(Number(listen.split(':')[1]), listen.split(':')[0], () => console.log(`lb on ${listen} -> ${backends.join(', ')}`));
