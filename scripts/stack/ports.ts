import { createServer } from 'node:net';

/**
 * Every port the local stack listens on, passed explicitly: `weed mini` silently moves a busy
 * default port, which would leave clients talking to the wrong process. One offset shifts them all,
 * so a second stack can run beside the first (TABLEMERE_STACK_PORT_OFFSET).
 *
 * The defaults fill 8770–8789: below Linux's ephemeral range (32768–60999, where the kernel picks
 * the local port of outgoing connections, so a default there can be taken at random), and within
 * 20 of each other, so two stacks whose offsets differ by 20 or more (30, 60, 1000, ...) never
 * share a port. Offsets up to 23978 keep every port below 32768.
 */
export function stackPorts(offset = 0) {
  const base = {
    postgres: 8770,
    s3: 8771,
    s3Grpc: 8772,
    iceberg: 8773,
    master: 8774,
    masterGrpc: 8775,
    volume: 8776,
    volumeGrpc: 8777,
    filer: 8778,
    filerGrpc: 8779,
    admin: 8780,
    adminGrpc: 8781,
    // The JVM catalogs, started only when asked for (npm start -- --catalog, the catalog tests).
    reference: 8782,
    nessie: 8783,
    nessieManagement: 8784,
    api: 8787,
    roller: 8788,
    internal: 8789,
  };
  return Object.fromEntries(Object.entries(base).map(([k, v]) => [k, v + offset])) as typeof base;
}

export type StackPorts = ReturnType<typeof stackPorts>;

/** Resolves true when nothing listens on 127.0.0.1:`port`. */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** The stack's ports that something else already listens on, by name. */
export async function busyPorts(ports: StackPorts): Promise<string[]> {
  const busy: string[] = [];
  for (const [name, port] of Object.entries(ports)) if (!(await portIsFree(port))) busy.push(`${name} ${port}`);
  return busy;
}
