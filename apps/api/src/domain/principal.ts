import type { ApiKeyLevel } from '@tablemere/contracts';
import { API_KEY_LEVELS } from '@tablemere/contracts';

/** Who is calling: the API key that authenticated the request, and its project. */
export interface Principal {
  keyId: string;
  projectId: string;
  level: ApiKeyLevel;
}

/** Levels are ordered: admin can do what write can, write what read can. */
export function levelAtLeast(level: ApiKeyLevel, required: ApiKeyLevel): boolean {
  return API_KEY_LEVELS.indexOf(level) >= API_KEY_LEVELS.indexOf(required);
}
