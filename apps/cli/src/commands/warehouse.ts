import { readFileSync } from 'node:fs';
import {
  CATALOG_AUTH_TYPES,
  type CatalogAuthInput,
  CatalogAuthType,
  CreateWarehouseRequest,
  UpdateWarehouseRequest,
  Warehouse,
  WarehouseList,
} from '@tablemere/contracts';
import type { Command } from 'commander';
import { type CommandContext, warehouseSegment } from '../context.ts';
import { CliError, usageError } from '../errors.ts';
import { columns } from '../output.ts';

/**
 * `tablemere warehouse add|list|get|update`: an owner registers their own Iceberg REST catalog and
 * bucket (POST /v1/warehouses), or moves one (PATCH), without a raw HTTP call. Secrets never come from the command
 * line: each is read from an environment variable or a file (`-` for standard input).
 */
export function addWarehouse(program: Command, context: CommandContext): Command {
  const warehouse = program
    .command('warehouse')
    .description('register Iceberg REST catalogs and their buckets as warehouses, and list them');
  addWarehouseAdd(warehouse, context);
  addWarehouseList(warehouse, context);
  addWarehouseGet(warehouse, context);
  addWarehouseUpdate(warehouse, context);
  return warehouse;
}

interface AddOptions {
  catalogUri?: string;
  warehouse?: string;
  auth?: string;
  clientId?: string;
  clientSecretFile?: string;
  scope?: string;
  tokenFile?: string;
  catalogAccessKeyId?: string;
  catalogSecretAccessKeyFile?: string;
  catalogRegion?: string;
  catalogService?: string;
  s3Endpoint?: string;
  region?: string;
  accessKeyId?: string;
  secretAccessKeyFile?: string;
  sinkBucket?: string;
  json?: boolean;
}

/** Where each secret may come from: an environment variable or a file flag, never a flag holding it. */
const SECRETS = {
  clientSecret: { env: 'TABLEMERE_CATALOG_CLIENT_SECRET', flag: '--client-secret-file', option: 'clientSecretFile' },
  token: { env: 'TABLEMERE_CATALOG_TOKEN', flag: '--token-file', option: 'tokenFile' },
  catalogSecretAccessKey: { env: 'TABLEMERE_CATALOG_SECRET_ACCESS_KEY', flag: '--catalog-secret-access-key-file', option: 'catalogSecretAccessKeyFile' },
  s3SecretAccessKey: { env: 'TABLEMERE_S3_SECRET_ACCESS_KEY', flag: '--secret-access-key-file', option: 'secretAccessKeyFile' },
} as const satisfies Record<string, { env: string; flag: string; option: keyof AddOptions }>;
type SecretName = keyof typeof SECRETS;

function addWarehouseAdd(warehouse: Command, context: CommandContext): void {
  withAuthFlags(warehouse
    .command('add')
    .description("register an Iceberg REST catalog and its bucket as a warehouse (admin key); its secrets are sealed and never shown again")
    .argument('<name>', 'the warehouse name in tablemere (lowercase letters, digits, "_" or "-")')
    .requiredOption('--catalog-uri <url>', "the catalog's REST URI, e.g. https://catalog.example.com/api/catalog")
    .requiredOption('--warehouse <warehouse>', 'what the catalog calls the warehouse, e.g. s3://warehouse or a catalog name')
    .requiredOption('--auth <type>', `how tablemere authenticates to the catalog: ${CATALOG_AUTH_TYPES.join(', ')}`))
    .requiredOption('--s3-endpoint <url>', "the bucket's S3 endpoint, e.g. https://s3.us-east-1.amazonaws.com")
    .requiredOption('--region <region>', "the bucket's region, e.g. us-east-1")
    .option('--access-key-id <id>', "S3: the warehouse's own access key id (secret: $TABLEMERE_S3_SECRET_ACCESS_KEY or --secret-access-key-file); left out, the catalog's vended credentials")
    .option('--secret-access-key-file <file>', 'S3: read the secret access key from this file ("-" for standard input)')
    .option('--sink-bucket <bucket>', "an ordinary bucket of the warehouse where its sinks keep their batches, written with --access-key-id's identity (default: the platform's intake bucket)")
    .option('--json', "print the API's JSON answer")
    .addHelpText(
      'after',
      `
Secrets are never taken as flag values (they would show in process lists and shell history):
each comes from its environment variable or a file flag, one of them "-" for standard input.

Examples:
  TABLEMERE_CATALOG_CLIENT_SECRET=... TABLEMERE_S3_SECRET_ACCESS_KEY=... \\
    tablemere warehouse add lake --catalog-uri https://polaris.example.com/api/catalog \\
      --warehouse lake --auth oauth2 --client-id tablemere \\
      --s3-endpoint https://s3.eu-west-1.amazonaws.com --region eu-west-1 --access-key-id AKIA...
  pass show catalog-token | tablemere warehouse add nessie --catalog-uri http://nessie:19120/iceberg \\
      --warehouse warehouse --auth bearer --token-file - --s3-endpoint http://minio:9000 --region us-east-1`,
    )
    .action(async (name: string, options: AddOptions, command: Command) => {
      // Everything is checked, and every secret read, before the API is called.
      const request = await addRequest(name, options, context);
      const answer = await context.api(command).post('/v1/warehouses', request, Warehouse);
      if (options.json) context.out.json(answer.body);
      else context.out.lines(warehouseLines(answer.value, `registered warehouse ${answer.value.name} (${answer.value.id})`));
    });
}

function addWarehouseList(warehouse: Command, context: CommandContext): void {
  warehouse
    .command('list')
    .description("list the project's warehouses (catalog auth type only, never a secret)")
    .option('--json', "print the API's JSON answer")
    .action(async (options: { json?: boolean }, command: Command) => {
      const answer = await context.api(command).get('/v1/warehouses', WarehouseList);
      if (options.json) context.out.json(answer.body);
      // An empty list prints nothing on stdout, so a script counting lines sees none.
      else if (answer.value.warehouses.length === 0) context.out.note('no warehouses: register one with `tablemere warehouse add`');
      else context.out.lines(warehouseTable(answer.value.warehouses));
    });
}

function addWarehouseGet(warehouse: Command, context: CommandContext): void {
  warehouse
    .command('get')
    .description('show one warehouse: its catalog, bucket and catalog auth type (never a secret)')
    .argument('<warehouse>', 'the warehouse name')
    .option('--json', "print the API's JSON answer")
    .action(async (name: string, options: { json?: boolean }, command: Command) => {
      const answer = await context.api(command).get(`/v1/warehouses/${warehouseSegment(name)}`, Warehouse);
      if (options.json) context.out.json(answer.body);
      else context.out.lines(warehouseLines(answer.value, `warehouse ${answer.value.name} (${answer.value.id})`));
    });
}

function addWarehouseUpdate(warehouse: Command, context: CommandContext): void {
  withAuthFlags(warehouse
    .command('update')
    .description("change a warehouse's catalog URI, warehouse, catalog auth (replaced whole) or S3 endpoint, region and keys (admin key); audited")
    .argument('<warehouse>', 'the warehouse name')
    .option('--catalog-uri <url>', "the catalog's new REST URI")
    .option('--warehouse <warehouse>', 'what the catalog calls the warehouse')
    .option('--auth <type>', `a new catalog auth, with its flags as for \`warehouse add\`: ${CATALOG_AUTH_TYPES.join(', ')}`))
    .option('--s3-endpoint <url>', "the bucket's new S3 endpoint")
    .option('--region <region>', "the bucket's region")
    .option('--access-key-id <id>', "S3: a new access key id of the warehouse's own (secret: $TABLEMERE_S3_SECRET_ACCESS_KEY or --secret-access-key-file)")
    .option('--secret-access-key-file <file>', 'S3: read the secret access key from this file ("-" for standard input)')
    .option('--json', "print the API's JSON answer")
    .addHelpText(
      'after',
      `
Only what is given changes; the name and the sink bucket stay. Rollers use the change from their
next tick, other API processes within a minute.

Example (a catalog registered at an address only one host could reach):
  tablemere warehouse update garden --catalog-uri http://10.0.3.5:8181 --s3-endpoint http://10.0.3.5:8333`,
    )
    .action(async (name: string, options: AddOptions, command: Command) => {
      const request = await updateRequest(name, options, context);
      const answer = await context.api(command).patch(`/v1/warehouses/${warehouseSegment(name)}`, request, Warehouse);
      if (options.json) context.out.json(answer.body);
      else context.out.lines(warehouseLines(answer.value, `updated warehouse ${answer.value.name} (${answer.value.id})`));
    });
}

/** The flags of each catalog auth type, the same for `add` and `update`; secrets only as files or environment variables. */
function withAuthFlags(command: Command): Command {
  return command
    .option('--client-id <id>', 'oauth2: the client id, else $TABLEMERE_CATALOG_CLIENT_ID (secret: $TABLEMERE_CATALOG_CLIENT_SECRET or --client-secret-file)')
    .option('--client-secret-file <file>', 'oauth2: read the client secret from this file ("-" for standard input)')
    .option('--scope <scope>', 'oauth2: the scope to ask for (default: the catalog\'s)')
    .option('--token-file <file>', 'bearer: read the token from this file ("-" for standard input); else $TABLEMERE_CATALOG_TOKEN')
    .option('--catalog-access-key-id <id>', 'sigv4: the access key id signing catalog requests (secret: $TABLEMERE_CATALOG_SECRET_ACCESS_KEY or --catalog-secret-access-key-file)')
    .option('--catalog-secret-access-key-file <file>', 'sigv4: read the secret access key from this file ("-" for standard input)')
    .option('--catalog-region <region>', 'sigv4: the region signed for (default: --region)')
    .option('--catalog-service <name>', 'sigv4: the service signed for (default: the catalog\'s, e.g. glue or s3tables)');
}

/** The flags of an auth type other than the one chosen are a mistake worth naming. */
const AUTH_FLAGS: Readonly<Record<CatalogAuthType, readonly (keyof AddOptions)[]>> = {
  oauth2: ['clientId', 'clientSecretFile', 'scope'],
  sigv4: ['catalogAccessKeyId', 'catalogSecretAccessKeyFile', 'catalogRegion', 'catalogService'],
  bearer: ['tokenFile'],
  none: [],
};
const flagOf = (option: string): string => `--${option.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/** The catalog auth `--auth` names, its secrets read; the flags of other auth types refused. */
async function authInput(options: AddOptions, secrets: Secrets): Promise<CatalogAuthInput> {
  const type = CatalogAuthType.safeParse(options.auth);
  if (!type.success) throw usageError(`--auth '${options.auth}': give one of ${CATALOG_AUTH_TYPES.join(', ')}`);
  for (const [other, flags] of Object.entries(AUTH_FLAGS)) {
    if (other === type.data) continue;
    const given = flags.find((flag) => options[flag] !== undefined);
    if (given) throw usageError(`${flagOf(given)} is for --auth ${other}, not --auth ${type.data}`);
  }
  switch (type.data) {
    case 'oauth2': {
      const clientId = options.clientId ?? secrets.env.TABLEMERE_CATALOG_CLIENT_ID?.trim();
      if (!clientId) throw usageError('--auth oauth2 needs --client-id (or $TABLEMERE_CATALOG_CLIENT_ID)');
      return { type: 'oauth2', client_id: clientId, client_secret: await secrets.required('clientSecret', '--auth oauth2'), ...(options.scope ? { scope: options.scope } : {}) };
    }
    case 'sigv4': {
      if (!options.catalogAccessKeyId) throw usageError('--auth sigv4 needs --catalog-access-key-id');
      const region = options.catalogRegion ?? options.region;
      if (!region) throw usageError('--auth sigv4 needs --catalog-region (or --region)');
      return {
        type: 'sigv4',
        access_key_id: options.catalogAccessKeyId,
        secret_access_key: await secrets.required('catalogSecretAccessKey', '--auth sigv4'),
        region,
        ...(options.catalogService ? { service: options.catalogService } : {}),
      };
    }
    case 'bearer':
      return { type: 'bearer', token: await secrets.required('token', '--auth bearer') };
    case 'none':
      return { type: 'none' };
  }
}

/** The warehouse's own S3 key pair, when `--access-key-id` is given (its secret from the env or a file). */
async function s3Keys(options: AddOptions, secrets: Secrets): Promise<{ access_key_id: string; secret_access_key: string } | undefined> {
  const s3Secret = await secrets.optional('s3SecretAccessKey');
  if (options.accessKeyId === undefined && s3Secret !== undefined && options.secretAccessKeyFile !== undefined) {
    throw usageError('--secret-access-key-file needs --access-key-id');
  }
  if (options.accessKeyId === undefined) return undefined;
  if (s3Secret === undefined) throw usageError(`--access-key-id needs its secret: set $${SECRETS.s3SecretAccessKey.env} or pass ${SECRETS.s3SecretAccessKey.flag} FILE`);
  return { access_key_id: options.accessKeyId, secret_access_key: s3Secret };
}

function oneStdinSecret(options: AddOptions): void {
  const files = Object.values(SECRETS).filter((s) => options[s.option] === '-');
  if (files.length > 1) throw usageError(`${files.map((s) => s.flag).join(' and ')}: only one secret can come from standard input`);
}

/** A request that failed its contract, as the flag its problem came from; never echoing a value (it may be a secret). */
function flagProblem(error: { issues: ReadonlyArray<{ path: readonly PropertyKey[]; message: string }> }, command: string): CliError {
  const issue = error.issues[0];
  const path = (issue?.path ?? []).map(String).join('.');
  return usageError(`${FIELD_FLAGS[path] ?? (path || command)}: ${issue?.message ?? 'invalid'}`);
}

async function addRequest(name: string, options: AddOptions, context: CommandContext): Promise<CreateWarehouseRequest> {
  warehouseSegment(name);
  oneStdinSecret(options);
  const secrets = new Secrets(options, context);
  const auth = await authInput(options, secrets);
  const keys = await s3Keys(options, secrets);
  const body = {
    name,
    rest_uri: options.catalogUri,
    warehouse: options.warehouse,
    auth,
    s3: {
      endpoint: options.s3Endpoint,
      region: options.region,
      ...(keys ?? {}),
      ...(options.sinkBucket !== undefined ? { sink_bucket: options.sinkBucket } : {}),
    },
  };
  const request = CreateWarehouseRequest.safeParse(body);
  if (request.success) return request.data;
  throw flagProblem(request.error, 'warehouse add');
}

async function updateRequest(name: string, options: AddOptions, context: CommandContext): Promise<UpdateWarehouseRequest> {
  warehouseSegment(name);
  oneStdinSecret(options);
  const secrets = new Secrets(options, context);
  if (options.auth === undefined) {
    const stray = Object.values(AUTH_FLAGS).flat().find((flag) => options[flag] !== undefined);
    if (stray) throw usageError(`${flagOf(stray)} needs --auth: the catalog auth is replaced whole`);
  }
  const auth = options.auth === undefined ? undefined : await authInput(options, secrets);
  const keys = await s3Keys(options, secrets);
  const s3 = { ...(options.s3Endpoint !== undefined ? { endpoint: options.s3Endpoint } : {}), ...(options.region !== undefined ? { region: options.region } : {}), ...(keys ?? {}) };
  const body = {
    ...(options.catalogUri !== undefined ? { rest_uri: options.catalogUri } : {}),
    ...(options.warehouse !== undefined ? { warehouse: options.warehouse } : {}),
    ...(auth !== undefined ? { auth } : {}),
    ...(Object.keys(s3).length > 0 ? { s3 } : {}),
  };
  if (Object.keys(body).length === 0) throw usageError('nothing to change: give --catalog-uri, --warehouse, --auth, --s3-endpoint, --region or --access-key-id');
  const request = UpdateWarehouseRequest.safeParse(body);
  if (request.success) return request.data;
  throw flagProblem(request.error, 'warehouse update');
}

const FIELD_FLAGS: Readonly<Record<string, string>> = {
  name: '<name>',
  rest_uri: '--catalog-uri',
  warehouse: '--warehouse',
  'auth.client_id': '--client-id',
  'auth.client_secret': '$TABLEMERE_CATALOG_CLIENT_SECRET / --client-secret-file',
  'auth.scope': '--scope',
  'auth.token': '$TABLEMERE_CATALOG_TOKEN / --token-file',
  'auth.access_key_id': '--catalog-access-key-id',
  'auth.secret_access_key': '$TABLEMERE_CATALOG_SECRET_ACCESS_KEY / --catalog-secret-access-key-file',
  'auth.region': '--catalog-region',
  'auth.service': '--catalog-service',
  's3.endpoint': '--s3-endpoint',
  's3.region': '--region',
  's3.access_key_id': '--access-key-id',
  's3.secret_access_key': '$TABLEMERE_S3_SECRET_ACCESS_KEY / --secret-access-key-file',
  's3.sink_bucket': '--sink-bucket',
};

/** Each secret from its file flag (`-`: standard input) or else its environment variable. */
class Secrets {
  constructor(
    private readonly options: AddOptions,
    private readonly context: CommandContext,
  ) {}

  get env(): Record<string, string | undefined> {
    return this.context.env;
  }

  async optional(name: SecretName): Promise<string | undefined> {
    const { env, flag, option } = SECRETS[name];
    const file = this.options[option] as string | undefined;
    if (file !== undefined) {
      const text = file === '-' ? await readAll(this.context.stdin()) : readSecretFile(file, flag);
      const secret = text.replace(/\r?\n$/, '');
      if (secret === '') throw usageError(`${flag} ${file === '-' ? '-: standard input' : file} is empty`);
      return secret;
    }
    const value = this.context.env[env];
    return value === undefined || value === '' ? undefined : value;
  }

  async required(name: SecretName, why: string): Promise<string> {
    const secret = await this.optional(name);
    if (secret === undefined) throw usageError(`${why} needs its secret: set $${SECRETS[name].env} or pass ${SECRETS[name].flag} FILE ("-" for standard input)`);
    return secret;
  }
}

function readSecretFile(file: string, flag: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
    throw new CliError('usage', `${flag} ${file}: cannot read it (${code})`);
  }
}

async function readAll(input: AsyncIterable<Uint8Array>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of input) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

/** One warehouse, as `warehouse add` and `warehouse get` print it. */
export function warehouseLines(warehouse: Warehouse, title: string): string[] {
  return [
    title,
    ...columns(
      [
        ['catalog URI', warehouse.rest_uri],
        ['warehouse', warehouse.warehouse],
        ['catalog auth', warehouse.auth.type],
        ['S3 endpoint', warehouse.s3.endpoint],
        ['S3 region', warehouse.s3.region],
        ['sink bucket', warehouse.s3.sink_bucket ?? "the platform's intake bucket"],
        ['created', warehouse.created_at],
      ],
      '  ',
    ),
  ];
}

export function warehouseTable(warehouses: readonly Warehouse[]): string[] {
  return columns([
    ['NAME', 'CATALOG URI', 'WAREHOUSE', 'AUTH', 'S3 ENDPOINT', 'REGION'],
    ...warehouses.map((w) => [w.name, w.rest_uri, w.warehouse, w.auth.type, w.s3.endpoint, w.s3.region]),
  ]);
}
