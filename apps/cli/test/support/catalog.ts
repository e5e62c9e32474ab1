import { dropNamespaces, stackCatalog } from '../../../../tests/support/stack.ts';

/** Drops a namespace the tests made in the shared catalog, with its tables and their files. */
export async function dropNamespace(namespace: string): Promise<void> {
  await dropNamespaces(await stackCatalog(), [namespace]);
}
