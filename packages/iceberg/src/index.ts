export { parseJson, stringifyJson } from './spec/json.ts';
