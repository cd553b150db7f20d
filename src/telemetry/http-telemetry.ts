// One SERVER span per request (GoTrue's attribute names and the current semantic-convention ones
// beside them), the request-duration histogram, and the domain counters read off the answer.
// Installed by createApp only when TRACING_ENABLED or METRICS_ENABLED: otherwise nothing here runs.
import {
  type Attributes,
  type Context as TraceContext,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  propagation,
  trace,
} from '@opentelemetry/api';
import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import type { AuditRecord } from '../db/audit.ts';
import type { Database } from '../db/database.ts';
import type { AuthMetrics } from './metrics.ts';
import { getTracer } from './tracing.ts';

const headerGetter: TextMapGetter<Headers> = {
  keys: (h) => [...h.keys()],
  get: (h, key) => h.get(key) ?? undefined,
};

/** Hono's `/admin/users/:user_id` as the spec writes it: `/admin/users/{user_id}`. */
export function routeTemplate(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)(\{[^/]*\})?\??/g, '{$1}');
}

const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/** Templates by route path: the app's routes are a fixed set. */
const templates = new Map<string, string>();

function cachedTemplate(path: string): string {
  let t = templates.get(path);
  if (t === undefined) {
    t = routeTemplate(path);
    templates.set(path, t);
  }
  return t;
}

/** The route that answered (the last matched handler, not a `use` middleware) and its parameters. */
function matchedRoute(c: Context): { route?: string; params: Record<string, string> } {
  const routes = matchedRoutes(c);
  for (let i = routes.length - 1; i >= 0; i--) {
    const r = routes[i]!;
    if (r.method === 'ALL' || r.path.includes('*')) continue;
    // No parameter in the route (GET /user, POST /token): nothing to decode.
    if (!r.path.includes(':')) return { route: cachedTemplate(r.path), params: NO_PARAMS };
    const saved = c.req.routeIndex;
    c.req.routeIndex = i;
    const params = c.req.param() as Record<string, string>;
    c.req.routeIndex = saved;
    return { route: cachedTemplate(r.path), params };
  }
  return { params: {} };
}

interface Options {
  tracing: boolean;
  metrics?: AuthMetrics;
  /**
   * Called once the request's span is started, with the context that holds it: the caller hands
   * it to what the request will use (its deps), so their spans become the request span's children.
   */
  onSpan?: (c: Context, parent: TraceContext) => void;
}

type DepsLike = { db: Database };

export function requestTelemetry(
  opts: Options,
): MiddlewareHandler<{ Variables: { deps: DepsLike; requestId: string } }> {
  const tracer = getTracer();
  return async (c, next) => {
    const started = performance.now();
    const method = c.req.method;
    const audits: AuditRecord[] = [];
    if (opts.metrics) {
      const deps = c.get('deps');
      const audit = deps.db.audit;
      if (audit)
        c.set('deps', {
          ...deps,
          db: {
            ...deps.db,
            audit: {
              ...audit,
              log: (r) => {
                audit.log(r);
                audits.push(r);
              },
            },
          },
        });
    }
    const span = opts.tracing
      ? tracer.startSpan(
          method,
          {
            kind: SpanKind.SERVER,
            attributes: { 'http.method': method, 'http.request.method': method, request_id: c.get('requestId') },
          },
          propagation.extract(ROOT_CONTEXT, c.req.raw.headers, headerGetter),
        )
      : undefined;
    // A request the sampler left out records nothing: its children are not even made, and
    // (without metrics) its route is not even looked up.
    const recording = span?.isRecording() ?? false;
    if (recording) opts.onSpan?.(c, trace.setSpan(ROOT_CONTEXT, span!));
    try {
      await next();
    } finally {
      if (span && !recording) span.end();
      if (recording || opts.metrics) finish();
    }
    function finish(): void {
      const status = c.res.status;
      const { route, params } = matchedRoute(c);
      if (span) {
        const attrs: Attributes = { 'http.status_code': status, 'http.response.status_code': status };
        if (route) {
          attrs['http.route'] = route;
          for (const [key, value] of Object.entries(params)) attrs[`http.route.params.${key}`] = value;
          span.updateName(`${method} ${route}`);
        }
        span.setAttributes(attrs);
        if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      }
      if (opts.metrics) {
        const statusClass = `${Math.floor(status / 100)}xx`;
        opts.metrics.requestDuration.record((performance.now() - started) / 1000, {
          'http.request.method': method,
          'http.response.status_class': statusClass,
          ...(route ? { 'http.route': route } : {}),
        });
        recordDomain(opts.metrics, c, route?.replace(/^\/auth\/v1(?=\/)/, ''), status, audits);
      }
    }
  };
}

const SIGN_IN_GRANTS = new Set(['password', 'pkce', 'id_token', 'web3']);

/** Sign-ins, refreshes, reuse detections and refusals from the route and its answer; sign-ups from the audit entries. */
function recordDomain(
  m: AuthMetrics,
  c: Context,
  route: string | undefined,
  status: number,
  audits: AuditRecord[],
): void {
  const errorCode = c.res.headers.get('x-sb-error-code') ?? undefined;
  const location = c.res.headers.get('location') ?? '';
  const ok = status < 400 && !/[?#&]error=/.test(location);
  const outcome = { 'auth.outcome': ok ? 'success' : 'failure' };
  if (route === '/token' && c.req.method === 'POST') {
    const grant = c.req.query('grant_type') ?? '';
    if (grant === 'refresh_token') {
      m.refreshes.add(1, outcome);
      if (errorCode === 'refresh_token_already_used') m.reuseDetections.add(1);
    } else if (SIGN_IN_GRANTS.has(grant)) {
      m.signIns.add(1, { 'auth.method': grant, ...outcome });
    }
  } else if (route === '/verify') {
    m.signIns.add(1, { 'auth.method': 'verify', ...outcome });
  } else if (route === '/callback') {
    m.signIns.add(1, { 'auth.method': 'oauth', ...outcome });
  }
  if (status === 429) m.rateLimitRefusals.add(1, { error_code: errorCode ?? 'unknown' });
  // A confirmation link writes user_signedup a second time (as GoTrue does): counted once, at sign-up.
  if (ok && route !== '/verify') {
    for (const a of audits) {
      if (a.payload.action !== 'user_signedup') continue;
      const traits = a.payload.traits as { provider?: unknown } | undefined;
      m.signUps.add(1, { 'auth.provider': typeof traits?.provider === 'string' ? traits.provider : 'email' });
    }
  }
}
