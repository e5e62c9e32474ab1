import { usageError } from './errors.ts';
import { loadStackEnv } from './env-file.ts';

export interface ApiConfig {
  /** Base URL of the tablemere API, without a trailing slash. */
  readonly apiUrl: string;
  readonly apiKey: string;
}

export interface ConfigSources {
  /** `--api-url` / `--api-key`; they win over everything else. */
  readonly flags: { readonly apiUrl?: string | undefined; readonly apiKey?: string | undefined };
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Where to start looking for a checkout's `.stack/env`, which fills what env leaves unset. */
  readonly cwd: string;
}

/**
 * Resolves the API URL and key: flags, then the environment, then the `.stack/env` of the
 * checkout the command runs in (read only when something is still missing).
 */
export function resolveApiConfig(sources: ConfigSources): ApiConfig {
  const { apiUrl, apiKey } = lookup(sources, true);
  if (apiKey === undefined) throw usageError('no API key: set TABLEMERE_API_KEY or pass --api-key');
  return { apiUrl, apiKey };
}

/** The API URL alone, the same way: what `sink send` needs when its key comes without a key file. */
export function resolveApiUrl(sources: ConfigSources): string {
  return lookup(sources, false).apiUrl;
}

function lookup({ flags, env, cwd }: ConfigSources, wantKey: boolean): { apiUrl: string; apiKey: string | undefined } {
  let apiUrl = nonEmpty(flags.apiUrl) ?? nonEmpty(env.TABLEMERE_API_URL);
  let apiKey = nonEmpty(flags.apiKey) ?? nonEmpty(env.TABLEMERE_API_KEY);
  if (apiUrl === undefined || (wantKey && apiKey === undefined)) {
    const stack = loadStackEnv(cwd);
    apiUrl ??= nonEmpty(stack.TABLEMERE_API_URL);
    apiKey ??= nonEmpty(stack.TABLEMERE_API_KEY);
  }
  if (apiUrl === undefined) throw usageError('no API URL: set TABLEMERE_API_URL or pass --api-url');
  return { apiUrl: checkUrl(apiUrl), apiKey };
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

function checkUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw usageError(`API URL '${text}' is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw usageError(`API URL '${text}' is not an http(s) URL`);
  return text.replace(/\/+$/, '');
}
