// Deps with spans (and counters) around what is slow or leaves the machine: password hashing,
// deps.fetch (SMS, OAuth providers, captcha, HIBP, Resend), mail and SMS sends. Used by createApp
// only when TRACING_ENABLED or METRICS_ENABLED; otherwise deps are used as built.
import type { Deps } from './deps.ts';
import type { AuthMetrics } from './telemetry/metrics.ts';
import { tracedFetch, tracedMethods } from './telemetry/tracing.ts';

export function instrumentDeps(deps: Deps, metrics: AuthMetrics | undefined): Deps {
  const outcome = (counter: AuthMetrics['emails'] | undefined) => (_method: string, ok: boolean) =>
    counter?.add(1, { 'auth.outcome': ok ? 'sent' : 'failed' });
  return {
    ...deps,
    hasher: tracedMethods(deps.hasher, ['hash', 'verify'], (m) => `password.${m}`),
    fetch: tracedFetch(deps.fetch),
    mailer: tracedMethods(deps.mailer, ['send'], () => 'mail.send', {}, outcome(metrics?.emails)),
    ...(deps.sms ? {
      sms: tracedMethods(deps.sms, ['send'], () => 'sms.send', { 'sms.provider': deps.sms.name }, outcome(metrics?.sms)),
    } : {}),
  };
}
