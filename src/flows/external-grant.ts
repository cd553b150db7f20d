// The token grants that sign in through an outside identity without a redirect (id_token, web3):
// the account is found, linked or made in one transaction with its session (mails and texts sent
// once it commits; a CommitThenFail keeps what was written and answers its error), then the after
// user created hook for an account that was made, as GoTrue calls it after the commit, and the
// identity-linked notification of a link.
import type { UserRow } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { afterUserCreated } from '../hooks/user-created.ts';
import type { AccountContext } from '../accounts/external-identity.ts';
import { type Notification, notifyAll } from '../accounts/notify.ts';
import { transactionThenSend } from '../accounts/outbox.ts';
import { createSession, tokenResponse } from '../accounts/session.ts';
import type { AmrMethod, RequestMeta, TokenResponse } from '../accounts/issued-session.ts';

export async function externalGrant(
  deps: Deps,
  aud: string,
  meta: RequestMeta,
  method: AmrMethod,
  account: (c: AccountContext) => Promise<UserRow>,
): Promise<TokenResponse> {
  let created: string | undefined;
  const notices: Notification[] = [];
  const outcome = await transactionThenSend(deps, async (tx, out) => {
    const c: AccountContext = { deps, tx, out, aud, ip: meta.ip, redirectTo: deps.config.siteUrl, notices };
    const user = await account(c);
    created = c.createdUserId;
    return { token: await tokenResponse(deps, tx, await createSession(deps, tx, user, method, meta)) };
  });
  if (created) await afterUserCreated(deps, created);
  await notifyAll(deps, notices, meta.ip);
  return outcome.token;
}
