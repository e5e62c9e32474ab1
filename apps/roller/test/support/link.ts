import net from 'node:net';

/**
 * A network link in front of one TCP service (the API's internal listener, the store) that can
 * go down and come back, as a cable or a partition between hosts does. Down, nothing passes
 * either way: connections open already and new ones are held without a byte forwarded (no
 * reset, no refusal: the caller waits, as it would on a silent network). Back up, the held
 * connections are closed (on a real network they timed out meanwhile) and new ones pass.
 * `cutAt` takes the link down by itself just before a request whose first bytes match would
 * pass (that request never arrives), so a test can cut it at an exact step of a roll.
 */
export interface Link {
  /** The link's end, e.g. `http://127.0.0.1:40123`. */
  url: string;
  /** Down from the `nth` (default first) request whose text (method, path, headers) matches. */
  cutAt(pattern: RegExp, nth?: number): void;
  cut(): void;
  heal(): void;
  readonly down: boolean;
  /** When the link last went down and came back (ms since the epoch). */
  readonly cutAtMs: number | undefined;
  readonly healedAtMs: number | undefined;
  close(): Promise<void>;
}

export async function startLink(target: string): Promise<Link> {
  const upstream = new URL(target);
  const open = new Set<net.Socket>();
  /** Connections that met the link down: closed when it comes back. */
  const held = new Set<net.Socket>();
  let down = false;
  let trigger: { pattern: RegExp; left: number } | undefined;
  let cutAtMs: number | undefined;
  let healedAtMs: number | undefined;
  const cut = () => {
    if (down) return;
    down = true;
    cutAtMs = Date.now();
    for (const socket of open) held.add(socket);
  };

  const server = net.createServer((client) => {
    const service = net.connect(Number(upstream.port), upstream.hostname);
    for (const socket of [client, service]) {
      open.add(socket);
      socket.on('close', () => {
        open.delete(socket);
        held.delete(socket);
      });
      socket.on('error', () => undefined);
      if (down) held.add(socket);
    }
    client.on('data', (chunk: Buffer) => {
      if (!down && trigger?.pattern.test(chunk.toString('latin1')) && --trigger.left === 0) {
        trigger = undefined;
        cut();
      }
      if (!down && !held.has(client)) service.write(chunk);
    });
    service.on('data', (chunk: Buffer) => {
      if (!down && !held.has(service)) client.write(chunk);
    });
    client.on('end', () => !down && !held.has(client) && service.end());
    service.on('end', () => !down && !held.has(service) && client.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    cutAt: (pattern, nth = 1) => {
      trigger = { pattern, left: nth };
    },
    cut,
    heal() {
      if (!down) return;
      for (const socket of held) socket.destroy();
      held.clear();
      down = false;
      healedAtMs = Date.now();
    },
    get down() {
      return down;
    },
    get cutAtMs() {
      return cutAtMs;
    },
    get healedAtMs() {
      return healedAtMs;
    },
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
