// GoTrue's loadFactor middleware: a malformed id is 404 validation_failed, a factor that is
// missing or another user's is 404 mfa_factor_not_found (the same answer: no probing for ids).
import { parseUuid } from '../admin/users.ts';
import type { Executor } from '../db/database.ts';
import { type FactorRow, findFactor } from '../db/mfa.ts';
import { notFound } from '../http/errors.ts';

export const factorNotFound = () => notFound('mfa_factor_not_found', 'Factor not found');

export function factorIdParam(raw: string): string {
  const id = parseUuid(raw);
  if (!id) throw notFound('validation_failed', 'factor_id must be an UUID');
  return id;
}

export async function loadFactor(ex: Executor, userId: string, rawId: string): Promise<FactorRow> {
  const factor = await findFactor(ex, factorIdParam(rawId));
  if (!factor || factor.userId !== userId) throw factorNotFound();
  return factor;
}
