// Spans through @opentelemetry/api only: without a registered tracer provider (TRACING_ENABLED=
// false, the default) every call here is the API's no-op. The adapters register the SDK's
// (telemetry-node.ts, telemetry-workers.ts).
// Span names and attributes never carry parameter values, bodies, headers or query strings.
//
// The parent of a child span is passed explicitly (the request's deps carry it: deps-telemetry.ts),
// never read from an async context: Node's AsyncLocalStorage runs a hook on every promise the
// process makes, and Workers would need the nodejs_als flag for it.
import {
  type Attributes,
  type Context,
  INVALID_SPAN_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';

export const TRACER_NAME = 'authsvc';

let tracer: Tracer | undefined;

/** The API's proxy tracer: it finds the SDK's once one is registered, and is a no-op until then. */
export function getTracer(): Tracer {
  tracer ??= trace.getTracer(TRACER_NAME);
  return tracer;
}

/** Where a child span hangs: the context holding the request's span. Undefined: not traced. */
export type SpanParent = Context | undefined;

const NO_SPAN = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** No attributes (frozen: shared by every span that has none). */
export const NO_ATTRIBUTES: Attributes = Object.freeze({}) as Attributes;

/**
 * Runs `fn` in a leaf span, a child of `parent`; a throw marks the span as an error (type only).
 * Without a parent (start-up, migrations, background sweeps) no span is made: a child never
 * becomes a stray trace of its own. (Not an async function: one promise fewer per call.)
 */
export function withSpan<T>(
  parent: SpanParent,
  name: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T>,
  kind: SpanKind = SpanKind.INTERNAL,
): Promise<T> {
  if (!parent) return fn(NO_SPAN);
  const span = getTracer().startSpan(name, { kind, attributes }, parent);
  const failed = (err: unknown): never => {
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.name : 'error' });
    span.end();
    throw err;
  };
  let result: Promise<T>;
  try {
    result = fn(span);
  } catch (err) {
    return failed(err);
  }
  return result.then((value) => {
    span.end();
    return value;
  }, failed);
}

const OPERATION =
  /^\s*(select|insert|update|delete|with|begin|commit|rollback|savepoint|release|set|create|alter|drop|lock|do|show|notify|listen|truncate)\b/i;
const TARGET =
  /\b(?:from|into|update|table)\s+((?:"[^"]+"|[a-z_][a-z0-9_$]*)(?:\s*\.\s*(?:"[^"]+"|[a-z_][a-z0-9_$]*))?)/i;

/**
 * A statement's span name: the prepared statement's name when it has one, else the operation
 * and the table it works on (`SELECT users`). Never the text itself: raw SQL may hold literals.
 */
export function statementSummary(text: string, preparedName?: string): { name: string; attributes: Attributes } {
  const attributes: Attributes = { 'db.system': 'postgresql', 'db.system.name': 'postgresql' };
  const op = OPERATION.exec(text)?.[1]?.toUpperCase() ?? 'QUERY';
  attributes['db.operation.name'] = op;
  const target =
    op === 'SELECT' || op === 'INSERT' || op === 'UPDATE' || op === 'DELETE' || op === 'WITH'
      ? TARGET.exec(text)?.[1]
      : undefined;
  const table = target?.split('.').at(-1)?.trim().replace(/"/g, '');
  if (table) attributes['db.collection.name'] = table;
  const summary = table ? `${op} ${table}` : op;
  attributes['db.query.summary'] = summary;
  // Frozen: the same object goes with every run of the statement.
  return { name: preparedName || summary, attributes: Object.freeze(attributes) };
}

/**
 * Summaries by prepared statement name (one name is always one text: prepared.ts) or else by
 * text: drizzle sends the same few texts over and over.
 */
const byName = new Map<string, { name: string; attributes: Attributes }>();
const byText = new Map<string, { name: string; attributes: Attributes }>();

/** Traces one statement run through `run` (a driver's promise-returning query), under `parent`. */
export function tracedStatement<T>(
  parent: SpanParent,
  text: string,
  preparedName: string | undefined,
  run: () => Promise<T>,
): Promise<T> {
  if (!parent) return run();
  const cache = preparedName ? byName : byText;
  const key = preparedName || text;
  let summary = cache.get(key);
  if (!summary) {
    summary = statementSummary(text, preparedName);
    if (cache.size >= 1000) cache.clear();
    cache.set(key, summary);
  }
  const { name, attributes } = summary;
  return withSpan(parent, name, attributes, () => run(), SpanKind.CLIENT);
}

/**
 * A fetch whose calls are CLIENT spans named `POST <host>`: method, host, port and status only
 * (a URL's path and query may carry codes or tokens; headers carry credentials).
 */
export function tracedFetch(inner: typeof fetch, parent: SpanParent): typeof fetch {
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    const attributes: Attributes = {
      'http.method': method,
      'http.request.method': method,
      'server.address': url.hostname,
      'url.scheme': url.protocol.replace(':', ''),
      ...(url.port ? { 'server.port': Number(url.port) } : {}),
    };
    return withSpan(
      parent,
      `${method} ${url.hostname}`,
      attributes,
      async (span) => {
        const res = await inner(input, init);
        span.setAttributes({ 'http.status_code': res.status, 'http.response.status_code': res.status });
        if (res.status >= 400) span.setStatus({ code: SpanStatusCode.ERROR });
        return res;
      },
      SpanKind.CLIENT,
    );
  };
}

/**
 * `target` with its async methods `names` wrapped by `wrap`; every other property is read through
 * to `target`, so class instances and getters keep working.
 */
export function wrapMethods<T extends object>(
  target: T,
  names: readonly (keyof T & string)[],
  wrap: (method: string, call: (...args: unknown[]) => Promise<unknown>) => (...args: unknown[]) => Promise<unknown>,
): T {
  const wrapped = Object.create(target) as T;
  for (const method of names) {
    const fn = target[method];
    if (typeof fn !== 'function') continue;
    Object.defineProperty(wrapped, method, {
      value: wrap(method, (...args) => (fn as (...a: unknown[]) => Promise<unknown>).apply(target, args)),
      enumerable: true,
    });
  }
  return wrapped;
}

/** `fn` (an async function) as one whose calls are spans named `name` under `parent`. */
export function tracedFunction<A extends unknown[], R>(
  fn: (...args: A) => Promise<R>,
  parent: SpanParent,
  name: string,
  attributes: Attributes = NO_ATTRIBUTES,
): (...args: A) => Promise<R> {
  return (...args) => withSpan(parent, name, attributes, () => fn(...args));
}
