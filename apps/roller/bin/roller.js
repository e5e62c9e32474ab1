#!/usr/bin/env node
// The roller's operator commands (src/cli.ts: roll, upkeep, intents). TypeScript run directly:
// register tsx's loader, then load the entry. On a Node older than the project's floor (a machine
// whose own node is 20) it runs itself again on the project's Node (scripts/node-runtime.mjs), so
// the AWS SDK runs on a Node it supports. Exit 2 when no such Node can be had.
import { onProjectNode } from '../../../scripts/node-runtime.mjs';

await onProjectNode(import.meta.url, 2);
const { register } = await import('tsx/esm/api');
register();
await import('../src/cli.ts');
