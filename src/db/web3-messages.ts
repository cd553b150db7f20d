// Web3 sign-in messages already used (authsvc's own table, migration 0014): one use per message,
// the pattern of saml_used_assertions (a unique key insert; expired entries deleted after a use).
import { lt } from 'drizzle-orm';
import type { Executor } from './database.ts';

/** Records a message as used; false when it already was (a replay, or a concurrent use that won). */
export async function useWeb3Message(ex: Executor, messageHash: string, expiresAt: Date): Promise<boolean> {
  const u = ex.t.web3UsedMessages;
  const rows = await ex.orm
    .insert(u)
    .values({ messageHash, expiresAt })
    .onConflictDoNothing()
    .returning({ hash: u.messageHash });
  return rows.length > 0;
}

/** Drops the entries of messages that have expired anyway (an indexed delete). */
export async function deleteExpiredWeb3Messages(ex: Executor, now: Date): Promise<void> {
  const u = ex.t.web3UsedMessages;
  await ex.orm.delete(u).where(lt(u.expiresAt, now));
}
