// The keep-alive race of research/40, apart from the API: a Node server with the given
// keep-alive (ms) and 64 keep-alive clients waiting 1-10 s between requests, their event loop
// blocked 0.4-1.2 s every 0.7 s as a loaded producer's is. Prints the requests answered and
// the resets. node scripts/node-runtime.mjs node research/40-keep-alive-race.mjs 5000
import http from 'node:http';

const keepAlive = Number(process.argv[2] ?? 5000);
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => res.end('ok'));
});
server.keepAliveTimeout = keepAlive;
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address();
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const post = () =>
  new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', reject);
    req.end('[{}]');
  });
const blocker = setInterval(() => {
  const until = Date.now() + 400 + Math.random() * 800;
  while (Date.now() < until);
}, 700);
let answered = 0;
const resets = [];
await Promise.all(
  Array.from({ length: 64 }, async () => {
    for (let round = 0; round < 5; round++) {
      try {
        await post();
        answered++;
      } catch (error) {
        resets.push(String(error));
      }
      await new Promise((resolve) => setTimeout(resolve, 1000 + Math.random() * 9000));
    }
  }),
);
clearInterval(blocker);
console.log(`${process.version}, server keep-alive ${keepAlive} ms: ${answered} answered, ${resets.length} failed${resets.length ? ` (${resets[0]})` : ''}`);
server.close();
agent.destroy();
