// Deps with counters (METRICS_ENABLED: mail and SMS sent/failed, built once) and, per request
// (TRACING_ENABLED), with spans around what is slow or leaves the machine: password hashing,
// deps.fetch (OAuth providers, captcha, HIBP), mail and SMS sends, and every database statement.
// Used by createApp only when tracing or metrics are on; otherwise deps are used as built.
import type { Context } from '@opentelemetry/api';
import type { PasswordHasher } from './crypto/password.ts';
import type { Deps } from './deps.ts';
import type { MailRequest, Mailer } from './mail/mailer.ts';
import type { SmsProvider } from './sms/provider.ts';
import type { RateLimitStore } from './db/rate-limit-store.ts';
import type { AuthMetrics } from './telemetry/metrics.ts';
import {
  NO_ATTRIBUTES,
  type SpanParent,
  tracedFetch,
  tracedFunction,
  withSpan,
  wrapMethods,
} from './telemetry/tracing.ts';

/** Mail and SMS sends counted by outcome (`sent`, `failed`). */
export function countSends<D extends Pick<Deps, 'mailer' | 'sms'>>(deps: D, metrics: AuthMetrics): D {
  const counted = <T extends object>(target: T, counter: AuthMetrics['emails']) =>
    wrapMethods(target, ['send'] as (keyof T & string)[], (_m, call) => async (...args) => {
      try {
        const result = await call(...args);
        counter.add(1, { 'auth.outcome': 'sent' });
        return result;
      } catch (err) {
        counter.add(1, { 'auth.outcome': 'failed' });
        throw err;
      }
    });
  return {
    ...deps,
    mailer: counted(deps.mailer, metrics.emails),
    ...(deps.sms ? { sms: counted(deps.sms, metrics.sms) } : {}),
  };
}

// One object per traced request for each service, its methods on the prototype: cheaper to make
// than a bound function and a closure per method.
class TracedHasher implements PasswordHasher {
  constructor(
    private readonly inner: PasswordHasher,
    private readonly parent: Context,
  ) {}
  hash(password: string): Promise<string> {
    return withSpan(this.parent, 'password.hash', NO_ATTRIBUTES, () => this.inner.hash(password));
  }
  verify(password: string, encoded: string): Promise<boolean> {
    return withSpan(this.parent, 'password.verify', NO_ATTRIBUTES, () => this.inner.verify(password, encoded));
  }
}

class TracedMailer implements Mailer {
  constructor(
    private readonly inner: Mailer,
    private readonly parent: Context,
  ) {}
  send(mail: MailRequest): Promise<void> {
    return withSpan(this.parent, 'mail.send', NO_ATTRIBUTES, () => this.inner.send(mail));
  }
}

/** The SMS provider with `send` (and Twilio Verify's `verifyCode`) as spans; the rest read through. */
function tracedSms(sms: SmsProvider, parent: Context): SmsProvider {
  const attributes = Object.freeze({ 'sms.provider': sms.name });
  const traced = Object.create(sms) as { -readonly [K in keyof SmsProvider]: SmsProvider[K] };
  traced.send = tracedFunction(sms.send.bind(sms), parent, 'sms.send', attributes);
  if (sms.verifyCode) traced.verifyCode = tracedFunction(sms.verifyCode.bind(sms), parent, 'sms.verify', attributes);
  return traced;
}

/**
 * One request's deps whose slow calls and statements are spans under `parent` (the request's
 * span). Built for every traced request, so kept small: an object per service, no copies of them.
 */
export function traceRequestDeps<D extends Deps>(deps: D, parent: Context): D {
  const { db, sms } = deps;
  return {
    ...deps,
    traceParent: parent,
    db: db.traced ? { ...db, ...db.traced(parent) } : db,
    hasher: new TracedHasher(deps.hasher, parent),
    fetch: tracedFetch(deps.fetch, parent),
    mailer: new TracedMailer(deps.mailer, parent),
    ...(sms ? { sms: tracedSms(sms, parent) } : {}),
  };
}

/**
 * The per-client limiter as a `rate_limit.take` span: its store (Postgres, memory, Durable Object) was built
 * once for the app, so its statements are not the request's; this span shows their time.
 */
export function tracedRateLimitStore(store: RateLimitStore, parent: SpanParent): RateLimitStore {
  return { take: (key, bucket, now) => withSpan(parent, 'rate_limit.take', {}, () => store.take(key, bucket, now)) };
}
