import { z } from 'zod';

const schema = z.object({
  TABLEMERE_ROLLER_HOST: z.string().default('127.0.0.1'),
  TABLEMERE_ROLLER_PORT: z.coerce.number().int().min(0).max(65535).default(8788),
  TABLEMERE_ROLLER_TICK_SECONDS: z.coerce.number().positive().default(10),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace']).default('info'),
});

export type RollerConfig = Readonly<z.infer<typeof schema>>;

/** Reads the environment once, at start-up; every problem is named in one message. */
export function loadConfig(env: NodeJS.ProcessEnv): RollerConfig {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`roller configuration is invalid: ${problems}`);
  }
  return Object.freeze(parsed.data);
}
