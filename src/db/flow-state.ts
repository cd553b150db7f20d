// flow_state rows of the PKCE flow (GoTrue §5.4).
import { and, desc, eq, inArray, isNull, lt } from 'drizzle-orm';
import type { Executor } from './database.ts';

export type FlowStateRow = Executor['t']['flowState']['$inferSelect'];

export async function insertFlowState(
  ex: Executor,
  f: {
    userId: string;
    challenge: string;
    method: 's256' | 'plain';
    authenticationMethod: string;
    providerType: string;
    now: Date;
  },
): Promise<FlowStateRow> {
  const rows = await ex.orm
    .insert(ex.t.flowState)
    .values({
      id: crypto.randomUUID(),
      userId: f.userId,
      authCode: crypto.randomUUID(),
      codeChallenge: f.challenge,
      codeChallengeMethod: f.method,
      providerType: f.providerType,
      authenticationMethod: f.authenticationMethod,
      createdAt: f.now,
      updatedAt: f.now,
    })
    .returning();
  return rows[0]!;
}

export async function latestFlowState(
  ex: Executor,
  userId: string,
  authenticationMethod: string,
): Promise<FlowStateRow | undefined> {
  const f = ex.t.flowState;
  const rows = await ex.orm
    .select()
    .from(f)
    .where(and(eq(f.userId, userId), eq(f.authenticationMethod, authenticationMethod)))
    .orderBy(desc(f.createdAt))
    .limit(1);
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

/** An /authorize: the row whose id is the OAuth `state` (GoTrue: NewFlowState with FlowStateParams). */
export async function insertOAuthFlowState(
  ex: Executor,
  f: {
    id: string;
    providerType: string;
    challenge?: string;
    method?: 's256' | 'plain';
    inviteToken?: string;
    referrer: string;
    oauthClientStateId?: string;
    linkingTargetId?: string;
    emailOptional: boolean;
    now: Date;
    /** Manual linking: the session that asked (checked again when the link completes). */
    linkingSessionId?: string;
    /** 'oauth' unless said (SSO: 'sso/saml'). */
    authenticationMethod?: string;
  },
): Promise<void> {
  await ex.orm.insert(ex.t.flowState).values({
    id: f.id,
    authCode: f.challenge ? crypto.randomUUID() : null,
    codeChallenge: f.challenge ?? null,
    codeChallengeMethod: f.method ?? null,
    providerType: f.providerType,
    authenticationMethod: f.authenticationMethod ?? 'oauth',
    inviteToken: f.inviteToken ?? null,
    referrer: f.referrer,
    oauthClientStateId: f.oauthClientStateId ?? null,
    linkingTargetId: f.linkingTargetId ?? null,
    linkingSessionId: f.linkingSessionId ?? null,
    emailOptional: f.emailOptional,
    createdAt: f.now,
    updatedAt: f.now,
  });
}

export async function findFlowStateById(
  ex: Executor,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<FlowStateRow | undefined> {
  const q = ex.orm.select().from(ex.t.flowState).where(eq(ex.t.flowState.id, id)).limit(1);
  const rows = opts.forUpdate ? await q.for('update') : await q;
  return rows[0];
}

/** PKCE callback: the user and the provider's tokens wait here for POST /token?grant_type=pkce. */
export async function issueFlowStateCode(
  ex: Executor,
  id: string,
  f: {
    userId: string;
    providerAccessToken: string;
    providerRefreshToken?: string;
    now: Date;
    /** A PKCE identity link: the identity, linked to `userId` at the code exchange. */
    linkingIdentity?: unknown;
  },
): Promise<void> {
  await ex.orm
    .update(ex.t.flowState)
    .set({
      userId: f.userId,
      providerAccessToken: f.providerAccessToken,
      providerRefreshToken: f.providerRefreshToken ?? null,
      linkingIdentity: f.linkingIdentity ?? null,
      authCodeIssuedAt: f.now,
      updatedAt: f.now,
    })
    .where(eq(ex.t.flowState.id, id));
}

/**
 * A /callback takes its state before calling the provider, in one statement, so of two callbacks
 * racing with one state only one ever reaches the provider's token endpoint. Undefined when the
 * state is gone or another callback already took it. Marks the row with auth_code_issued_at,
 * which the PKCE path sets anyway when it issues the code.
 */
export async function claimOAuthFlowState(ex: Executor, id: string, now: Date): Promise<FlowStateRow | undefined> {
  const f = ex.t.flowState;
  const rows = await ex.orm
    .update(f)
    .set({ authCodeIssuedAt: now, updatedAt: now })
    .where(and(eq(f.id, id), eq(f.authenticationMethod, 'oauth'), isNull(f.authCodeIssuedAt), isNull(f.userId)))
    .returning();
  return rows[0];
}

/**
 * GoTrue's models/cleanup.go for flow_state and oauth_client_states: rows created before
 * `before` go, at most `batch` per table per call, skipping rows another transaction holds.
 */
export async function deleteStaleFlowStates(ex: Executor, before: Date, batch = 100): Promise<void> {
  const f = ex.t.flowState;
  await ex.orm
    .delete(f)
    .where(
      inArray(
        f.id,
        ex.orm
          .select({ id: f.id })
          .from(f)
          .where(lt(f.createdAt, before))
          .limit(batch)
          .for('update', { skipLocked: true }),
      ),
    );
  const o = ex.t.oauthClientStates;
  await ex.orm
    .delete(o)
    .where(
      inArray(
        o.id,
        ex.orm
          .select({ id: o.id })
          .from(o)
          .where(lt(o.createdAt, before))
          .limit(batch)
          .for('update', { skipLocked: true }),
      ),
    );
}

/** Provider-side PKCE: the verifier of one /authorize (GoTrue's OAuthClientState). */
export async function insertOAuthClientState(
  ex: Executor,
  f: { id: string; providerType: string; codeVerifier: string; now: Date },
): Promise<void> {
  await ex.orm
    .insert(ex.t.oauthClientStates)
    .values({ id: f.id, providerType: f.providerType, codeVerifier: f.codeVerifier, createdAt: f.now });
}

/** The verifier, taken once: the row is deleted as it is read. */
export async function takeOAuthClientState(ex: Executor, id: string): Promise<string | undefined> {
  const o = ex.t.oauthClientStates;
  const rows = await ex.orm.delete(o).where(eq(o.id, id)).returning({ codeVerifier: o.codeVerifier });
  return rows[0]?.codeVerifier ?? undefined;
}
