#!/usr/bin/env node
// Builds the Benthos binary the shipper test drives (main.go here, Benthos pinned in go.mod and
// go.sum) into .cache/tools/benthos-<version>/ (../go-tool.mjs), its stamp a hash of go.mod,
// go.sum and main.go; run as a script it prints the binary's path (the test's set-up).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureGoTool, printWhenRun } from '../go-tool.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

/** The path of the Benthos binary, built first when there is none for these inputs. */
export function ensureBenthos({ quiet = false } = {}) {
  const goMod = readFileSync(path.join(here, 'go.mod'), 'utf8');
  const version = /github\.com\/redpanda-data\/benthos\/v4 (v\S+)/.exec(goMod)?.[1];
  if (!version) throw new Error('tests/shippers/benthos/go.mod does not require github.com/redpanda-data/benthos/v4');
  const hash = createHash('sha256');
  for (const file of ['go.mod', 'go.sum', 'main.go']) hash.update(readFileSync(path.join(here, file)));
  return ensureGoTool({
    name: 'benthos',
    title: 'Benthos',
    version,
    inputs: hash.digest('hex'),
    goWanted: /^go (\S+)/m.exec(goMod)?.[1],
    source: () => here,
    args: ['.'],
    quiet,
  });
}

printWhenRun(import.meta.url, ensureBenthos);
