// The route table. Everything runtime-specific arrives in `deps`; this file reads on one screen.
import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { AppEnv, RequestBindings } from './app-env.ts';
import type { Database } from './db/database.ts';
import type { Deps } from './deps.ts';
import { countSends, traceRequestDeps, tracedRateLimitStore } from './deps-telemetry.ts';
import { corsMiddleware } from './http/cors.ts';
import { requestDeadline } from './http/deadline.ts';
import { isDatabaseUnavailable } from './db/database.ts';
import {
  API_VERSION_2024,
  databaseUnavailable,
  errorBody,
  unexpectedFailure,
  wantsApiVersion2024,
} from './http/error-body.ts';
import { ApiError, OAuthApiError } from './core/errors.ts';
import { clientIp } from './http/request-meta.ts';
import { rateLimitStores } from './http/rate-limit.ts';
import { createOAuthCache } from './oauth/context.ts';
import { checkRequestTarget, limitDeclaredBody } from './http/read-json.ts';
import { adminAuditRoutes } from './routes/admin-audit.ts';
import { adminSsoRoutes } from './routes/admin-sso.ts';
import { adminConfigRoutes } from './routes/admin-config.ts';
import { adminCustomProviderRoutes } from './routes/admin-custom-providers.ts';
import { adminGenerateLinkRoutes } from './routes/admin-generate-link.ts';
import { adminUsersRoutes } from './routes/admin-users.ts';
import { consoleRoutes } from './routes/console.ts';
import { externalRoutes } from './routes/external.ts';
import { featureGateRoutes } from './routes/feature-gates.ts';
import { healthRoutes } from './routes/health.ts';
import { inviteRoutes } from './routes/invite.ts';
import { logoutRoutes } from './routes/logout.ts';
import { mfaRoutes } from './routes/mfa.ts';
import { oauthClientRoutes } from './routes/oauth-clients.ts';
import { oauthServerRoutes } from './routes/oauth-server.ts';
import { openapiRoutes } from './routes/openapi.ts';
import { otpRoutes } from './routes/otp.ts';
import { passkeyRoutes } from './routes/passkeys.ts';
import { sessionRoutes } from './routes/sessions.ts';
import { signupRoutes } from './routes/signup.ts';
import { ssoRoutes } from './routes/sso.ts';
import { tokenRoutes } from './routes/token.ts';
import { userRoutes } from './routes/user.ts';
import { verifyRoutes } from './routes/verify.ts';
import { auditLogSink } from './telemetry/audit-log.ts';
import { requestTelemetry } from './telemetry/http-telemetry.ts';
import { errorFields } from './telemetry/logger.ts';
import { createAuthMetrics } from './telemetry/metrics.ts';

const CORS_ALLOWED_HEADERS = [
  'Accept',
  'Authorization',
  'Content-Type',
  'X-Client-IP',
  'X-Client-Info',
  'X-JWT-AUD',
  'x-use-cookie',
  'X-Supabase-Api-Version',
  'apikey',
];

/** Deps without a database when the adapter passes one with each request (RequestBindings.db). */
export type AppDeps = Omit<Deps, 'db'> & { db?: Database };

export function createApp(built: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>({ strict: false });
  // TRACING_ENABLED / METRICS_ENABLED (the adapter has registered the SDK): spans, counters.
  const { tracing, metrics: metricsConfig } = built.config;
  const metrics = metricsConfig.enabled ? createAuthMetrics() : undefined;
  const deps = metrics ? countSends(built, metrics) : built;
  const requestIdHeader = deps.config.api.requestIdHeader;
  const storeOver = rateLimitStores(deps.config);
  const limiter = deps.limiter ?? (deps.db ? storeOver(deps.db) : undefined);
  const disableAuditRows = deps.config.auditLog.disablePostgres;
  // Discovery documents and JWKS are kept for the life of this app (one per isolate on Workers).
  const oauthCache = deps.oauthCache ?? createOAuthCache();
  // Hooks send the client's address (metadata.ip_address); read only while one is enabled.
  const anyHook = Object.values(deps.config.hooks).some((h) => h.enabled);

  app.use('*', async (c, next) => {
    const inherited = requestIdHeader ? c.req.header(requestIdHeader) : undefined;
    const requestId = inherited || crypto.randomUUID();
    const logger = deps.logger.child({ request_id: requestId });
    const deadline = new AbortController();
    const requestDb = (c.env as RequestBindings | undefined)?.db;
    const db = requestDb ?? deps.db;
    if (!db) throw new Error('createApp: no database in deps or in the request bindings');
    // The request's audit entries are logged with its request id; its transactions roll back
    // once it has timed out (database.ts).
    c.set('deps', {
      ...deps,
      oauthCache,
      db: { ...db, audit: auditLogSink(logger, disableAuditRows), signal: deadline.signal },
    });
    if (anyHook) c.get('deps').clientIp = clientIp(c);
    c.set('deadline', deadline);
    c.set('requestId', requestId);
    c.set('logger', logger);
    // A request's own database gets a store over it (sharing the app's sweep clock).
    c.set('limiter', deps.limiter ?? (requestDb ? storeOver(requestDb) : (limiter ?? storeOver(db))));
    const started = Date.now();
    await next();
    logger.info('request completed', {
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      duration_ms: Date.now() - started,
    });
  });

  if (tracing.enabled || metrics) {
    app.use(
      '*',
      requestTelemetry({
        tracing: tracing.enabled,
        metrics,
        onSpan: (c, parent) => {
          // c.get, never c.var (anywhere): Hono builds a copy of every variable for each c.var read.
          c.set('deps', traceRequestDeps(c.get('deps'), parent));
          c.set('limiter', tracedRateLimitStore(c.get('limiter'), parent));
        },
      }),
    );
  }
  app.use('*', corsMiddleware([...CORS_ALLOWED_HEADERS, ...deps.config.api.corsAllowedHeaders]));
  // API_MAX_REQUEST_DURATION: 504 request_timeout, as GoTrue's timeoutMiddleware.
  app.use('*', requestDeadline(deps.config.api.maxRequestDuration));

  // A declared body over the limit is refused up front; readJson counts undeclared (chunked) ones.
  // (hono/body-limit would touch `c.req.raw.body`, which on Node builds a web Request and stream
  // for every POST: a tenth of a refresh's CPU.)
  app.on(['POST', 'PUT', 'PATCH', 'DELETE'], '*', limitDeclaredBody);
  // NUL and unpaired surrogates never reach a flow: refused here for the path and query, in
  // readJson and readForm for bodies.
  app.use('*', checkRequestTarget);

  // Mounted in this order; the feature gates answer for the paths of a switched-off feature that
  // no route took. /openapi.json describes every group's operations.
  const groups = [
    healthRoutes,
    signupRoutes,
    tokenRoutes,
    userRoutes,
    logoutRoutes,
    sessionRoutes,
    verifyRoutes,
    otpRoutes,
    inviteRoutes,
    adminUsersRoutes,
    adminGenerateLinkRoutes,
    adminAuditRoutes,
    adminConfigRoutes(deps.now()),
    adminCustomProviderRoutes,
    adminSsoRoutes,
    externalRoutes,
    mfaRoutes,
    passkeyRoutes,
    oauthServerRoutes,
    oauthClientRoutes,
    ssoRoutes,
  ];
  const api = new Hono<AppEnv>({ strict: false });
  for (const g of groups) api.route('/', g.app);
  api.route('/', featureGateRoutes).route('/', consoleRoutes.app);
  const openapi = openapiRoutes(() => [...groups, consoleRoutes].flatMap((g) => g.operations));
  api.route('/', openapi.app);
  app.route('/', api);
  // supabase-js calls `<project url>/auth/v1/…` (Supabase's gateway prefix): serving it too
  // lets `createClient('http://localhost:8081', key)` work with no proxy in front.
  app.route('/auth/v1', api);

  app.notFound(() => {
    throw new ApiError(404, 'not_found', 'Not Found');
  });

  app.onError((err, c) => {
    if (err instanceof OAuthApiError) {
      const log = c.get('logger');
      const fields = err.cause ? { cause: errorFields(err.cause) } : {};
      if (err.status >= 500) log?.error(err.description, fields);
      else log?.info(err.description, fields);
      return c.json({ error: err.error, error_description: err.description }, err.status as 400, err.headers);
    }
    let apiErr: ApiError;
    if (err instanceof ApiError) apiErr = err;
    else if (err instanceof HTTPException && err.status < 500)
      apiErr = new ApiError(err.status, 'unknown', err.message);
    else if (isDatabaseUnavailable(err)) {
      // A known outage: 503 database_unavailable (http/error-body.ts).
      c.get('logger')?.warn('database unavailable', errorFields(err));
      apiErr = databaseUnavailable();
    } else {
      c.get('logger')?.error('unexpected error', errorFields(err));
      apiErr = unexpectedFailure();
    }
    if (apiErr.status >= 500 && apiErr === err) {
      c.get('logger')?.error(apiErr.message, {
        error_code: apiErr.errorCode,
        ...(err.cause ? errorFields(err.cause) : {}),
      });
    }
    const v2024 = wantsApiVersion2024(c.req.header('x-supabase-api-version'));
    const res = c.json(errorBody(apiErr, v2024, c.get('requestId')), apiErr.status as 400);
    if (v2024) res.headers.set('X-Supabase-Api-Version', API_VERSION_2024);
    // GoTrue sets the header only for an error with a code (a hook's error object has none).
    if (apiErr.errorCode && !(v2024 && apiErr.errorCode === 'weak_password'))
      res.headers.set('x-sb-error-code', apiErr.errorCode);
    return res;
  });

  return app;
}
