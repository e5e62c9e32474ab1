import { randomBytes } from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import { createDatabase, createPool, dropDatabase, endPool, migrate } from '@tablemere/db';
import { buildApp, buildInternalApp } from '../../../api/src/app.ts';
import { bootstrap } from '../../../api/src/bootstrap.ts';
import { SecretBox } from '../../../api/src/domain/secrets.ts';
import { createLogger } from '../../../api/src/logger.ts';
import { stackEnv, stackWarehouse } from '../../../../tests/support/stack.ts';
import { freePort } from '../../../../tests/support/ports.ts';

export interface TestApi {
  /** Where the API listens, e.g. http://127.0.0.1:40123 */
  url: string;
  /** The bootstrap project's admin key. */
  adminKey: string;
  /** The bootstrap warehouse's name. */
  warehouse: string;
  /** The roller's side of the API (/internal), on its own port, and its bearer secret. */
  internalUrl: string;
  bootstrapSecret: string;
  stop(): Promise<void>;
}

/**
 * The real API on a real port for the CLI to call: a fresh database (`cli_test_<random>`,
 * migrated, one bootstrap project with an admin key and the stack's catalog registered as a
 * warehouse), the stack's store and catalog.
 */
export async function startTestApi(): Promise<TestApi> {
  const env = stackEnv();
  const databaseUrl = new URL(env.DATABASE_URL!);
  databaseUrl.pathname = `/cli_test_${randomBytes(4).toString('hex')}`;
  await createDatabase(databaseUrl.toString());
  await migrate(databaseUrl.toString());

  const secretKey = randomBytes(32).toString('base64');
  const warehouse = 'garden';
  const pool = createPool(databaseUrl.toString(), { applicationName: 'cli-test' });
  const boot = await bootstrap(pool, {
    secretKey,
    warehouse: { ...stackWarehouse(env), name: warehouse },
  });

  const s3 = new S3Client({
    endpoint: env.AWS_ENDPOINT_URL!,
    region: env.AWS_REGION!,
    forcePathStyle: true,
    credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID!, secretAccessKey: env.AWS_SECRET_ACCESS_KEY! },
  });
  // The public URL is shown by /v1/connection, so the port is chosen before the app is built.
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const app = buildApp({
    logger: createLogger({ level: 'warn' }),
    pool,
    s3,
    secrets: SecretBox.fromBase64(secretKey),
    intakeBucket: env.TABLEMERE_INTAKE_BUCKET!,
    publicUrl: url,
  });
  await app.listen({ host: '127.0.0.1', port });

  const bootstrapSecret = randomBytes(24).toString('base64url');
  const internal = buildInternalApp({
    logger: createLogger({ level: 'warn' }),
    pool,
    secrets: SecretBox.fromBase64(secretKey),
    intakeBucket: env.TABLEMERE_INTAKE_BUCKET!,
    bootstrapSecret,
  });
  const internalPort = await freePort();
  await internal.listen({ host: '127.0.0.1', port: internalPort });

  return {
    url,
    adminKey: boot.adminKey!,
    warehouse,
    internalUrl: `http://127.0.0.1:${internalPort}`,
    bootstrapSecret,
    async stop() {
      await internal.close();
      await app.close();
      await endPool(pool);
      s3.destroy();
      await dropDatabase(databaseUrl.toString());
    },
  };
}
