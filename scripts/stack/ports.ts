import { createServer } from 'node:net';

/**
 * Every port the local stack listens on, passed explicitly: `weed mini` silently moves a busy
 * default port, which would leave clients talking to the wrong process. One offset shifts them all,
 * so a second stack can run beside the first (TABLEMERE_STACK_PORT_OFFSET).
 */
export function stackPorts(offset = 0) {
  const base = {
    postgres: 54329,
    api: 8787,
    roller: 8788,
    internal: 8789,
    s3: 8333,
    s3Grpc: 18333,
    iceberg: 8181,
    master: 9333,
    masterGrpc: 19333,
    volume: 9340,
    volumeGrpc: 19340,
    filer: 8888,
    filerGrpc: 18888,
    admin: 23646,
    adminGrpc: 33646,
    // The JVM catalogs, started only when asked for (npm start -- --catalog, the catalog tests).
    reference: 28181,
    nessie: 28182,
    nessieManagement: 28183,
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
