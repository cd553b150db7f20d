// Hono context variables: deps plus per-request facts, nothing else.
import type { FactorRow } from './db/mfa.ts';
import type { JWTPayload } from 'jose';
import type { Database } from './db/database.ts';
import type { SessionRow } from './db/sessions.ts';
import type { IdentityRow, UserRow } from './db/users.ts';
import type { Deps } from './deps.ts';
import type { RateLimitStore } from './db/rate-limit-store.ts';
import type { Logger } from './telemetry/logger.ts';

export interface AuthContext {
  claims: JWTPayload & Record<string, unknown>;
  user: UserRow;
  session: SessionRow | undefined;
  /** The user's identities as read with the user (oldest first). */
  identities: IdentityRow[];
  /** The user's MFA factors, read in the same statement (oldest first). */
  factors: FactorRow[];
}

/**
 * What an adapter may pass as Hono's `env` (app.fetch's second argument), per request. Node's
 * server passes its own (`incoming`); request-meta.ts reads the socket peer from either.
 */
export interface RequestBindings {
  /** The client's address as the adapter knows it (Bun, Deno; CF-Connecting-IP on Workers). */
  remoteAddr?: string;
  /**
   * This request's database, for an adapter whose connections belong to one request (Workers:
   * a socket may not outlive the request that opened it). Wins over `deps.db`.
   */
  db?: Database;
}

export interface AppEnv {
  Variables: {
    deps: Deps;
    requestId: string;
    logger: Logger;
    auth: AuthContext;
    limiter: RateLimitStore;
    /** Aborted when the request runs past API_MAX_REQUEST_DURATION (http/deadline.ts). */
    deadline: AbortController;
  };
}
