// What issuing a session produces and consumes: the request's metadata, the session just written,
// the token response. Shared by accounts/session.ts and the GoTrue-token adoption beneath it.
import type { FactorRow } from '../db/mfa.ts';
import type { SessionRow } from '../db/sessions.ts';
import type { IdentityRow, UserRow } from '../db/users.ts';

export type AmrMethod =
  | 'password'
  | 'otp'
  | 'magiclink'
  | 'recovery'
  | 'invite'
  | 'email/signup'
  | 'email_change'
  | 'oauth'
  | 'anonymous'
  | 'token_refresh'
  | 'sso/saml'
  | 'passkey'
  | 'oauth_provider/authorization_code'
  | 'web3';

export interface RequestMeta {
  ip?: string;
  userAgent?: string;
}

export interface IssuedSession {
  user: UserRow;
  session: SessionRow;
  refreshToken: string;
  /** Known when the session was just written: the access token and user JSON need no re-read. */
  amr?: { method: string; timestamp: number }[];
  identities?: IdentityRow[];
  /** The user's MFA factors, when already read. */
  factors?: FactorRow[];
  /** An OAuth client's public id for the `client_id` claim, when it is not the session's client uuid (a metadata document's URL). */
  clientId?: string;
  /**
   * The custom access token hook's `authentication_method` when it is not the new session's AMR
   * method (`amr`) or a refresh (`token_refresh`): an MFA verification.
   */
  method?: string;
}

export interface TokenResponse {
  body: Record<string, unknown>;
  headers: Record<string, string>;
}
