// GoTrue's rule of PUT /user (api.UserUpdate), shared by every route that changes how an account
// is reached or signed in to: while the user has a verified MFA factor, only an aal2 session may.
// PUT /user (email, phone, password) as GoTrue; authsvc also applies it to identity linking and
// unlinking (review 2026-12-01 M2), where GoTrue checks nothing.
import type { Executor } from '../db/database.ts';
import { hasVerifiedFactor } from '../db/mfa.ts';
import { ApiError } from '../core/errors.ts';

/** 401 `insufficient_aal` unless `aal` is aal2 or the user has no verified factor; `what` completes GoTrue's message. */
export async function requireAal2WhenMfa(
  ex: Executor,
  userId: string,
  aal: string | null | undefined,
  what: string,
): Promise<void> {
  if (aal === 'aal2') return;
  if (await hasVerifiedFactor(ex, userId))
    throw new ApiError(401, 'insufficient_aal', `AAL2 session is required to ${what} when MFA is enabled.`);
}
