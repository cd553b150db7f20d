// flow_state rows of the PKCE flow (GoTrue §5.4).
import { and, desc, eq } from 'drizzle-orm';
import type { Executor } from './database.ts';

export type FlowStateRow = Executor['t']['flowState']['$inferSelect'];

export async function insertFlowState(ex: Executor, f: { userId: string; challenge: string; method: 's256' | 'plain'; authenticationMethod: string; providerType: string; now: Date }): Promise<FlowStateRow> {
  const rows = await ex.orm.insert(ex.t.flowState).values({
    id: crypto.randomUUID(), userId: f.userId, authCode: crypto.randomUUID(), codeChallenge: f.challenge,
    codeChallengeMethod: f.method, providerType: f.providerType, authenticationMethod: f.authenticationMethod,
    createdAt: f.now, updatedAt: f.now,
  }).returning();
  return rows[0]!;
}

export async function latestFlowState(ex: Executor, userId: string, authenticationMethod: string): Promise<FlowStateRow | undefined> {
  const f = ex.t.flowState;
  const rows = await ex.orm.select().from(f).where(and(eq(f.userId, userId), eq(f.authenticationMethod, authenticationMethod)))
    .orderBy(desc(f.createdAt)).limit(1);
  return rows[0];
}

export async function findFlowStateByAuthCode(ex: Executor, authCode: string): Promise<FlowStateRow | undefined> {
  const f = ex.t.flowState;
  const rows = await ex.orm.select().from(f).where(eq(f.authCode, authCode)).limit(1).for('update');
  return rows[0];
}

export async function markAuthCodeIssued(ex: Executor, id: string, now: Date): Promise<void> {
  await ex.orm.update(ex.t.flowState).set({ authCodeIssuedAt: now, updatedAt: now }).where(eq(ex.t.flowState.id, id));
}

export async function deleteFlowState(ex: Executor, id: string): Promise<void> {
  await ex.orm.delete(ex.t.flowState).where(eq(ex.t.flowState.id, id));
}
