#!/usr/bin/env node
// The CLI is TypeScript run directly: register tsx's loader, then load the entry.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
