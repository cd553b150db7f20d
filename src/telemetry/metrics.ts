// The instruments authsvc records, through @opentelemetry/api only. Created from the global
// meter once the adapter has registered the SDK (METRICS_ENABLED); the Prometheus names are the
// OpenTelemetry ones with dots as underscores, `_total` on counters and the unit on histograms.
import { type Counter, type Histogram, type Meter, metrics } from '@opentelemetry/api';

export const METER_NAME = 'authsvc';

export interface AuthMetrics {
  /** http.server.request.duration (s) by http.request.method, http.route, http.response.status_class. */
  requestDuration: Histogram;
  /** auth.signins by auth.method (password, pkce, id_token, web3, verify, oauth) and auth.outcome. */
  signIns: Counter;
  /** auth.signups by auth.provider (email, phone, anonymous, an OAuth provider). */
  signUps: Counter;
  /** auth.refreshes by auth.outcome. */
  refreshes: Counter;
  /** auth.refresh_token.reuse_detections: a revoked refresh token was replayed, its family revoked. */
  reuseDetections: Counter;
  /** auth.emails by auth.outcome (sent, failed). */
  emails: Counter;
  /** auth.sms by auth.outcome (sent, failed). */
  sms: Counter;
  /** auth.rate_limit.refusals by error_code (429 answers). */
  rateLimitRefusals: Counter;
}

export function createAuthMetrics(meter: Meter = metrics.getMeter(METER_NAME)): AuthMetrics {
  return {
    requestDuration: meter.createHistogram('http.server.request.duration', {
      unit: 's',
      description: 'Duration of HTTP server requests.',
      advice: { explicitBucketBoundaries: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10] },
    }),
    signIns: meter.createCounter('auth.signins', { description: 'Sign-in attempts by method and outcome.' }),
    signUps: meter.createCounter('auth.signups', { description: 'Users signed up, by provider.' }),
    refreshes: meter.createCounter('auth.refreshes', { description: 'Refresh-token grants by outcome.' }),
    reuseDetections: meter.createCounter('auth.refresh_token.reuse_detections', {
      description: "Refresh tokens reused outside the reuse window (the session's tokens are revoked).",
    }),
    emails: meter.createCounter('auth.emails', { description: 'Emails sent or failed.' }),
    sms: meter.createCounter('auth.sms', { description: 'SMS messages sent or failed.' }),
    rateLimitRefusals: meter.createCounter('auth.rate_limit.refusals', {
      description: 'Requests refused by a rate limit (429).',
    }),
  };
}
