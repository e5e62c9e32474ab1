#!/usr/bin/env node
// The CLI is TypeScript run directly: register tsx's loader, then load the entry. On a Node older
// than the project's floor it runs itself again on the project's Node (scripts/node-runtime.mjs).
import { onProjectNode } from '../../../scripts/node-runtime.mjs';

await onProjectNode(import.meta.url, 4);
const { register } = await import('tsx/esm/api');
register();
await import('../src/main.ts');
