// Worker threads do not inherit the parent's TypeScript loader: register it, then load the worker.
import { register } from 'tsx/esm/api';

register();
await import('./ndjson-worker.ts');
