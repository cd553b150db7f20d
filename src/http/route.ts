// One endpoint, declared once: method and path, authentication and guards, the per-IP rate limit,
// the JSON body's schema, the captcha check and the OpenAPI metadata. `routeGroup(tag).route(spec,
// handler)` registers the Hono route (the named middleware in front of it, so the router shows
// them) and records the operation that GET /openapi.json describes (openapi/document.ts), as
// better-auth's createAuthEndpoint and GoTrue's api.go declare an endpoint in one place.
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import type * as z from 'zod';
import type { AppEnv } from '../app-env.ts';
import { requireAdmin } from './admin-auth.ts';
import { requireAuth } from './auth.ts';
import { requireCaptcha } from './captcha.ts';
import { enforceRateLimit, type LimitName } from './rate-limit.ts';
import { readJson, readOptionalJson } from './read-json.ts';

type Schema = Record<string, unknown>;
export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface Param {
  name: string;
  description?: string;
  required?: boolean;
  schema?: Schema;
}

export interface Reply {
  description: string;
  /** A component schema's name, or a schema. */
  schema?: string | Schema;
  headers?: Record<string, string>;
  /** GoTrue's error body (components.responses.ClientError), with this description. */
  error?: boolean;
}

/** An operation as the OpenAPI document describes it. */
export interface Operation {
  method: Method;
  /** OpenAPI form: `{param}`. */
  path: string;
  summary: string;
  tag: string;
  /** GoTrue's handler, where there is one. */
  gotrue?: string;
  auth?: 'user' | 'admin' | 'user-optional';
  /** The schema(s) the handler parses the JSON body with; several when a query parameter picks one. */
  body?: z.ZodObject | Record<string, z.ZodObject>;
  bodyOptional?: boolean;
  form?: Schema;
  query?: Param[];
  replies: Record<string, Reply>;
}

type Middleware = MiddlewareHandler<AppEnv>;

export interface RouteSpec<B extends z.ZodObject | undefined> extends Omit<Operation, 'tag' | 'body'> {
  /** Another tag than the group's. */
  tag?: string;
  /** The JSON body, read before the handler runs (readJson; readOptionalJson when bodyOptional). */
  body?: B;
  /** Documented only: a body the handler reads itself, after checks of its own (or one per grant type, POST /token). */
  bodyReadByHandler?: z.ZodObject | Record<string, z.ZodObject>;
  /** Middleware that runs before authentication (a feature gate that answers first, as in GoTrue). */
  before?: Middleware[];
  /** The authentication middleware, when it is not `auth`'s (requireAuth for user, requireAdmin for admin). */
  authenticate?: Middleware;
  /** Middleware after authentication: feature gates, notAnonymous. */
  guards?: Middleware[];
  /** The per-IP bucket, taken after the guards and before the body is read. */
  rateLimit?: LimitName;
  /** Check the body's captcha token (when SECURITY_CAPTCHA_ENABLED) once the body is read. */
  captcha?: boolean;
  /** Hono's path, when OpenAPI's does not translate (`{p}` becomes `:p`). */
  honoPath?: string;
}

/** OpenAPI's `{param}` as Hono's `:param`, so that `c.req.param(name)` is typed. */
type HonoPath<P extends string> = P extends `${infer A}{${infer N}}${infer R}` ? `${A}:${N}${HonoPath<R>}` : P;

export type Handler<B extends z.ZodObject | undefined, P extends string = string> = (
  c: Context<AppEnv, HonoPath<P>>,
  body: B extends z.ZodObject ? z.output<B> : undefined,
) => Response | Promise<Response>;

const AUTH: Partial<Record<NonNullable<Operation['auth']>, Middleware>> = { user: requireAuth, admin: requireAdmin };

/** The routes of one tag: a Hono app to mount, and the operations it serves. */
export class RouteGroup {
  readonly app = new Hono<AppEnv>();
  readonly operations: Operation[] = [];

  constructor(readonly tag: string) {}

  route<P extends string, B extends z.ZodObject | undefined = undefined>(
    spec: RouteSpec<B> & { path: P },
    handler: Handler<B, P>,
  ): this {
    const {
      body,
      bodyReadByHandler,
      before = [],
      authenticate,
      guards = [],
      rateLimit,
      captcha,
      honoPath,
      tag,
      ...doc
    } = spec;
    const documentedBody = body ?? bodyReadByHandler;
    this.operations.push({ ...doc, tag: tag ?? this.tag, ...(documentedBody ? { body: documentedBody } : {}) });
    const auth = authenticate ?? (spec.auth ? AUTH[spec.auth] : undefined);
    const run: Middleware = async (c: Context<AppEnv, HonoPath<P>>) => {
      if (rateLimit) await enforceRateLimit(c, rateLimit);
      const parsed = body ? await (spec.bodyOptional ? readOptionalJson(c, body) : readJson(c, body)) : undefined;
      if (captcha) await requireCaptcha(c, parsed ?? {});
      return handler(c, parsed as Parameters<Handler<B, P>>[1]);
    };
    const chain = [...before, ...(auth ? [auth] : []), ...guards, run] as [Middleware];
    this.app.on(spec.method.toUpperCase(), honoPath ?? spec.path.replace(/\{(\w+)\}/g, ':$1'), ...chain);
    return this;
  }
}

export const routeGroup = (tag: string): RouteGroup => new RouteGroup(tag);
