import type { FastifyInstance } from 'fastify';
import type { InternalRouteDeps } from '../../deps.ts';
import { requireBootstrapSecret } from './auth.ts';
import { createRoll } from './create-roll.ts';
import { takeLease } from './lease.ts';
import { listRolls } from './list-rolls.ts';
import { listSinks } from './list-sinks.ts';
import { releaseLease } from './release-lease.ts';
import { reportRoll } from './report-roll.ts';
import { reportUpkeep } from './report-upkeep.ts';
import { setRollErrorRoute } from './set-roll-error.ts';
import { setState } from './set-state.ts';

/**
 * The roller's routes, on the internal app only. The secret check is on the app itself, so
 * it guards unknown paths too: without the secret even a 404 is a 401.
 */
export function internalRoutes(app: FastifyInstance, bootstrapSecret: string, deps: InternalRouteDeps): void {
  requireBootstrapSecret(app, bootstrapSecret);
  listSinks(app, deps);
  takeLease(app, deps);
  releaseLease(app, deps);
  createRoll(app, deps);
  listRolls(app, deps);
  reportRoll(app, deps);
  reportUpkeep(app, deps);
  setState(app, deps);
  setRollErrorRoute(app, deps);
}
