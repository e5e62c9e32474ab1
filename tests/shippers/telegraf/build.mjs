#!/usr/bin/env node
// Builds the Telegraf binary the shipper test drives from Telegraf's own module at a pinned
// version (under its go.mod and go.sum), with only the plugins the test uses (Telegraf's `custom`
// build tag, then a tag for each plugin), into .cache/tools/telegraf-<version>/
// (../go-tool.mjs). Cold (empty GOMODCACHE and GOCACHE, two cores): 55-58 s, 1 s of it
// downloading Telegraf's source. Run as a script it prints the binary's path (the test's set-up).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureGoTool, printWhenRun } from '../go-tool.mjs';

const VERSION = 'v1.37.2';
const MODULE = `github.com/influxdata/telegraf@${VERSION}`;
const TAGS = 'custom,inputs.file,outputs.http,parsers.influx,serializers.json';
const here = path.dirname(fileURLToPath(import.meta.url));

/** The path of the Telegraf binary, built first when there is none for this version and these tags. */
export function ensureTelegraf({ quiet = false } = {}) {
  return ensureGoTool({
    name: 'telegraf',
    title: 'Telegraf',
    version: VERSION,
    inputs: MODULE,
    goWanted: '1.25.5', // Telegraf v1.37.2's go.mod
    // Telegraf's source into the module cache; the build runs in it, under its own go.mod.
    source: (fail) => {
      const got = spawnSync('go', ['mod', 'download', '-json', MODULE], { cwd: here, encoding: 'utf8' });
      if (got.error || got.status !== 0) fail(`go mod download ${MODULE} exited ${got.status ?? got.error?.message}: ${got.stdout}${got.stderr}`);
      return JSON.parse(got.stdout).Dir;
    },
    // The version as Telegraf's Makefile sets it: its log and User-Agent say `unknown` otherwise.
    args: ['-tags', TAGS, '-ldflags', `-X github.com/influxdata/telegraf/internal.Version=${VERSION.slice(1)}`, './cmd/telegraf'],
    quiet,
  });
}

printWhenRun(import.meta.url, ensureTelegraf);
