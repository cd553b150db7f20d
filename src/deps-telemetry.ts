// Deps with counters (METRICS_ENABLED: mail and SMS sent/failed, built once) and, per request
// (TRACING_ENABLED), with spans around what is slow or leaves the machine: password hashing,
// deps.fetch (OAuth providers, captcha, HIBP), mail and SMS sends, and every database statement.
// Used by createApp only when tracing or metrics are on; otherwise deps are used as built.
import type { Context } from '@opentelemetry/api';
import type { Deps } from './deps.ts';
import type { RateLimitStore } from './http/rate-limit-store.ts';
import type { AuthMetrics } from './telemetry/metrics.ts';
import { type SpanParent, tracedFetch, tracedFunction, withSpan, wrapMethods } from './telemetry/tracing.ts';

/** Mail and SMS sends counted by outcome (`sent`, `failed`). */
export function countSends(deps: Deps, metrics: AuthMetrics): Deps {
  const counted = <T extends object>(target: T, counter: AuthMetrics['emails']) => wrapMethods(target, ['send'] as (keyof T & string)[], (_m, call) => async (...args) => {
    try {
      const result = await call(...args);
      counter.add(1, { 'auth.outcome': 'sent' });
      return result;
    } catch (err) {
      counter.add(1, { 'auth.outcome': 'failed' });
      throw err;
    }
  });
  return { ...deps, mailer: counted(deps.mailer, metrics.emails), ...(deps.sms ? { sms: counted(deps.sms, metrics.sms) } : {}) };
}

/**
 * One request's deps whose slow calls and statements are spans under `parent` (the request's
 * span). Built for every traced request, so kept small: a few closures, no copies of the services.
 */
export function traceRequestDeps<D extends Deps>(deps: D, parent: Context): D {
  const { db, hasher, mailer, sms } = deps;
  let tracedSms: typeof sms;
  if (sms) {
    const attributes = { 'sms.provider': sms.name };
    tracedSms = Object.create(sms, {
      send: { value: tracedFunction(sms.send.bind(sms), parent, 'sms.send', attributes) },
      ...(sms.verifyCode ? { verifyCode: { value: tracedFunction(sms.verifyCode.bind(sms), parent, 'sms.verify', attributes) } } : {}),
    }) as typeof sms;
  }
  return {
    ...deps,
    db: db.traced ? { ...db, orm: db.traced(parent) } : db,
    hasher: {
      hash: tracedFunction(hasher.hash.bind(hasher), parent, 'password.hash'),
      verify: tracedFunction(hasher.verify.bind(hasher), parent, 'password.verify'),
    },
    fetch: tracedFetch(deps.fetch, parent),
    mailer: { send: tracedFunction(mailer.send.bind(mailer), parent, 'mail.send') },
    ...(tracedSms ? { sms: tracedSms } : {}),
  };
}

/**
 * The per-client limiter as a `rate_limit.take` span: its store (Postgres, memory, KV) was built
 * once for the app, so its statements are not the request's; this span shows their time.
 */
export function tracedRateLimitStore(store: RateLimitStore, parent: SpanParent): RateLimitStore {
  return { take: (key, bucket, now) => withSpan(parent, 'rate_limit.take', {}, () => store.take(key, bucket, now)) };
}
