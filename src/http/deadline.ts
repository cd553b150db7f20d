// API_MAX_REQUEST_DURATION (GoTrue's timeoutMiddleware): a request still running at the limit
// gets 504 request_timeout. The handler cannot be stopped mid-statement, but the deadline is
// aborted: its transactions then roll back instead of committing (db/database.ts), and a body
// still being read (a client that stalls mid-upload) is cancelled.
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../app-env.ts';
import { errorFields } from '../telemetry/logger.ts';
import { ApiError } from '../core/errors.ts';

export const requestTimedOut = () =>
  new ApiError(504, 'request_timeout', 'Processing this request timed out, please retry after a moment.');

/** `seconds` of 0 means no limit. */
export function requestDeadline(seconds: number): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!(seconds > 0)) return next();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<'expired'>((resolve) => {
      timer = setTimeout(() => resolve('expired'), seconds * 1000);
    });
    const work = next().then(() => 'done' as const);
    const first = await Promise.race([work, expired]);
    clearTimeout(timer);
    if (first === 'done') return;
    c.get('deadline').abort();
    // The handler finishes on its own; its outcome no longer reaches the client.
    work.catch((err: unknown) => c.get('logger').error('request failed after its timeout', errorFields(err)));
    throw requestTimedOut();
  };
}
