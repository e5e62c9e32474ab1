import { createServer, type AddressInfo } from 'node:net';

/**
 * A port the OS handed out a moment ago and nobody listens on now: for a server to take, or
 * as an address where nothing answers.
 */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', resolve);
  });
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
