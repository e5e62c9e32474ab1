import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { stackPorts, type StackPorts } from '../../../../scripts/stack/ports.ts';
import type { Managed } from '../../../../scripts/stack/process.ts';
import { startSeaweed } from '../../../../scripts/stack/seaweed.ts';
import { repoRoot } from '../../../../tests/support/stack.ts';
import { createS3Client } from '../../src/index.ts';
import { freePort } from '../../../../tests/support/ports.ts';

const weedBin = path.join(repoRoot, '.venv', 'bin', 'weed');


async function freePorts(): Promise<StackPorts> {
  const names = Object.keys(stackPorts()) as Array<keyof StackPorts>;
  const ports = {} as StackPorts;
  const taken = new Set<number>();
  for (const name of names) {
    let port = await freePort();
    while (taken.has(port)) port = await freePort();
    taken.add(port);
    ports[name] = port;
  }
  return ports;
}

export interface WeedMini {
  endpoint: string;
  intakeBucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** A client with the admin identity. */
  client(options?: { accessKeyId: string; secretAccessKey: string }): S3Client;
  /** Runs `weed shell` commands against this instance; answers their output. */
  shell(commands: string[]): Promise<string>;
  /** Kills the process (the store goes away mid-test) without removing its data. */
  kill(): Promise<void>;
  /** Kills it and removes its data. */
  stop(): Promise<void>;
}

/**
 * A throwaway `weed mini` of the same release as the stack's, on free ports and a fresh dir:
 * for tests that must stop the store or change its settings (quota, identities), which the
 * shared stack must never see.
 */
export async function startWeedMini(): Promise<WeedMini> {
  const dir = await mkdtemp(path.join(tmpdir(), 'tablemere-weed-'));
  const ports = await freePorts();
  const accessKeyId = 'admin';
  const secretAccessKey = 'adminsecret';
  const intakeBucket = 'intake-test';
  let proc: Managed;
  try {
    proc = await startSeaweed({
      weedBin,
      dir: path.join(dir, 'data'),
      logFile: path.join(dir, 'weed.log'),
      ports,
      tableBucket: 'warehouse',
      intakeBucket,
      accessKeyId,
      secretAccessKey,
      region: 'us-east-1',
    });
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const endpoint = `http://127.0.0.1:${ports.s3}`;
  const kill = () => proc.stop(2_000);
  return {
    endpoint,
    intakeBucket,
    accessKeyId,
    secretAccessKey,
    client: (credentials = { accessKeyId, secretAccessKey }) =>
      createS3Client({ endpoint, region: 'us-east-1', credentials, connectTimeoutMs: 1_000, requestTimeoutMs: 5_000, maxAttempts: 1 }),
    shell(commands) {
      // `host:port.grpcPort`: the master's gRPC port is not the default port + 10000 here.
      const child = spawn(weedBin, ['shell', `-master=127.0.0.1:${ports.master}.${ports.masterGrpc}`], { stdio: ['pipe', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stdin.end(`${commands.join('\n')}\n`);
      return new Promise((resolve, reject) => {
        child.once('error', reject);
        child.once('exit', (code) => (code === 0 ? resolve(output) : reject(new Error(`weed shell exited ${code}: ${output}`))));
      });
    },
    kill,
    async stop() {
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
