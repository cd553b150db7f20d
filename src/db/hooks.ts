// A Postgres-function hook (GoTrue: hooks/hookspgfunc): `select "<schema>"."<function>"($1::jsonb)`
// under a statement timeout, inside the transaction it is given. `set local` lasts until that
// transaction ends, so the timeout is put back to the default right after the call.
import type { Executor } from './database.ts';

/**
 * Calls the hook function with `payload` (JSON text) and returns its jsonb answer as text (null
 * for SQL null). `schema` and `fn` are plain identifiers (config/values.ts parseHookUri).
 */
export async function callHookFunction(
  tx: Executor,
  schema: string,
  fn: string,
  payload: string,
  timeoutMs: number,
): Promise<string | null> {
  await tx.runner.run('', `set local statement_timeout to '${Math.floor(timeoutMs)}'`, []);
  const rows = await tx.runner.run('', `select ("${schema}"."${fn}"($1::jsonb))::text as output`, [payload]);
  await tx.runner.run('', 'set local statement_timeout to default', []);
  const output = rows[0]?.output;
  return typeof output === 'string' ? output : null;
}
