/**
 * One-off bootstrap for a stack that is not started by `npm start` (docker-compose, a server):
 * applies the migrations, creates the intake bucket and, when missing, the project, one admin API
 * key and one warehouse registering the catalog named by the standard variables. Prints the admin
 * key once.
 *
 *   DATABASE_URL=… TABLEMERE_SECRET_KEY=… ICEBERG_REST_URI=… ICEBERG_WAREHOUSE=s3://… \
 *   AWS_ENDPOINT_URL=… AWS_REGION=… AWS_ACCESS_KEY_ID=… AWS_SECRET_ACCESS_KEY=… \
 *   TABLEMERE_INTAKE_BUCKET=… node --import tsx scripts/bootstrap.ts
 */
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { migrate } from '@tablemere/db';
import { createS3Client } from '@tablemere/store';
import { z } from 'zod';
import { bootstrap } from '../apps/api/src/bootstrap.ts';

const Env = z.object({
  DATABASE_URL: z.string().min(1),
  TABLEMERE_SECRET_KEY: z.string().min(1),
  TABLEMERE_WAREHOUSE: z.string().min(1).default('garden'),
  ICEBERG_REST_URI: z.url(),
  ICEBERG_WAREHOUSE: z.string().startsWith('s3://'),
  AWS_ENDPOINT_URL: z.url(),
  AWS_REGION: z.string().min(1),
  AWS_ACCESS_KEY_ID: z.string().min(1),
  AWS_SECRET_ACCESS_KEY: z.string().min(1),
  TABLEMERE_INTAKE_BUCKET: z.string().min(1),
});

const parsed = Env.safeParse(process.env);
if (!parsed.success) {
  console.error(`bootstrap: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  process.exit(2);
}
const env = parsed.data;
await migrate(env.DATABASE_URL);
const s3 = createS3Client({
  endpoint: env.AWS_ENDPOINT_URL,
  region: env.AWS_REGION,
  credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY },
});
await s3.send(new CreateBucketCommand({ Bucket: env.TABLEMERE_INTAKE_BUCKET })).catch((error: { name?: string }) => {
  if (error.name !== 'BucketAlreadyOwnedByYou' && error.name !== 'BucketAlreadyExists') throw error;
});
s3.destroy();
const out = await bootstrap(env.DATABASE_URL, {
  secretKey: env.TABLEMERE_SECRET_KEY,
  warehouse: {
    name: env.TABLEMERE_WAREHOUSE,
    restUri: env.ICEBERG_REST_URI,
    warehouse: env.ICEBERG_WAREHOUSE,
    // The catalog's OAuth2 client is the store identity, as SeaweedFS issues it.
    auth: { type: 'oauth2', clientId: env.AWS_ACCESS_KEY_ID, clientSecret: env.AWS_SECRET_ACCESS_KEY },
    s3: { endpoint: env.AWS_ENDPOINT_URL, region: env.AWS_REGION, accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY },
  },
});
console.log(
  out.adminKey
    ? `admin API key (shown once, keep it): ${out.adminKey}`
    : `already bootstrapped: project ${out.projectId}, warehouse ${out.warehouse.name}; the admin key was shown when it was created`,
);
