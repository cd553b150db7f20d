// Hono context variables: deps plus per-request facts, nothing else.
import type { JWTPayload } from 'jose';
import type { SessionRow } from './db/sessions.ts';
import type { IdentityRow, UserRow } from './db/users.ts';
import type { Deps } from './deps.ts';
import type { RateLimitStore } from './http/rate-limit-store.ts';
import type { Logger } from './telemetry/logger.ts';

export interface AuthContext {
  claims: JWTPayload & Record<string, unknown>;
  user: UserRow;
  session: SessionRow | undefined;
  /** The user's identities as read with the user (oldest first). */
  identities: IdentityRow[];
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
