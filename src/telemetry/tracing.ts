// Spans through @opentelemetry/api only: without a registered SDK (TRACING_ENABLED=false, the
// default) every call here is the API's no-op. The adapters register the SDK (telemetry-node.ts).
// Span names and attributes never carry parameter values, bodies, headers or query strings.
import { type Attributes, INVALID_SPAN_CONTEXT, type Span, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';

export const TRACER_NAME = 'authsvc';

export function getTracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}

const NO_SPAN = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/**
 * Runs `fn` in a leaf span, a child of the active one; a throw marks the span as an error (type
 * only). The span is not made active (nothing under it is traced), which spares a context switch.
 * Without an active span (start-up, migrations, a runtime without async context such as Workers)
 * no span is made: a child never becomes a stray trace of its own.
 */
export async function withSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>, kind: SpanKind = SpanKind.INTERNAL): Promise<T> {
  if (!trace.getActiveSpan()) return fn(NO_SPAN);
  const span = getTracer().startSpan(name, { kind, attributes });
  try {
    return await fn(span);
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.name : 'error' });
    throw err;
  } finally {
    span.end();
  }
}

const OPERATION = /^\s*(select|insert|update|delete|with|begin|commit|rollback|savepoint|release|set|create|alter|drop|lock|do|show|notify|listen|truncate)\b/i;
const TARGET = /\b(?:from|into|update|table)\s+((?:"[^"]+"|[a-z_][a-z0-9_$]*)(?:\s*\.\s*(?:"[^"]+"|[a-z_][a-z0-9_$]*))?)/i;

/**
 * A statement's span name: the prepared statement's name when it has one, else the operation
 * and the table it works on (`SELECT users`). Never the text itself: raw SQL may hold literals.
 */
export function statementSummary(text: string, preparedName?: string): { name: string; attributes: Attributes } {
  const attributes: Attributes = { 'db.system': 'postgresql', 'db.system.name': 'postgresql' };
  const op = OPERATION.exec(text)?.[1]?.toUpperCase() ?? 'QUERY';
  attributes['db.operation.name'] = op;
  const target = op === 'SELECT' || op === 'INSERT' || op === 'UPDATE' || op === 'DELETE' || op === 'WITH' ? TARGET.exec(text)?.[1] : undefined;
  const table = target?.split('.').at(-1)!.trim().replace(/"/g, '');
  if (table) attributes['db.collection.name'] = table;
  const summary = table ? `${op} ${table}` : op;
  attributes['db.query.summary'] = summary;
  return { name: preparedName || summary, attributes };
}

/** Summaries by statement text: drizzle sends the same few texts over and over. */
const summaries = new Map<string, { name: string; attributes: Attributes }>();

/** Traces one statement run through `run` (a driver's promise-returning query). */
export function tracedStatement<T>(text: string, preparedName: string | undefined, run: () => Promise<T>): Promise<T> {
  if (!trace.getActiveSpan()) return run();
  const key = preparedName ? `${preparedName}\u0000${text}` : text;
  let summary = summaries.get(key);
  if (!summary) {
    summary = statementSummary(text, preparedName);
    if (summaries.size >= 1000) summaries.clear();
    summaries.set(key, summary);
  }
  const { name, attributes } = summary;
  return withSpan(name, attributes, () => run(), SpanKind.CLIENT);
}

/**
 * A fetch whose calls are CLIENT spans named `POST <host>`: method, host, port and status only
 * (a URL's path and query may carry codes or tokens; headers carry credentials).
 */
export function tracedFetch(inner: typeof fetch): typeof fetch {
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    const attributes: Attributes = {
      'http.method': method, 'http.request.method': method, 'server.address': url.hostname, 'url.scheme': url.protocol.replace(':', ''),
      ...(url.port ? { 'server.port': Number(url.port) } : {}),
    };
    return withSpan(`${method} ${url.hostname}`, attributes, async (span) => {
      const res = await inner(input, init);
      span.setAttributes({ 'http.status_code': res.status, 'http.response.status_code': res.status });
      if (res.status >= 400) span.setStatus({ code: SpanStatusCode.ERROR });
      return res;
    }, SpanKind.CLIENT);
  };
}

/**
 * `target` with its async methods `names` traced (and reported to `onOutcome`); every other
 * property is read through to `target`, so class instances and getters keep working.
 */
export function tracedMethods<T extends object>(
  target: T, names: readonly (keyof T & string)[], spanName: (method: string) => string,
  attributes: Attributes = {}, onOutcome?: (method: string, ok: boolean) => void,
): T {
  const wrapped = Object.create(target) as T;
  for (const method of names) {
    const fn = target[method];
    if (typeof fn !== 'function') continue;
    const call = (...args: unknown[]) => withSpan(spanName(method), attributes, async () => {
      try {
        const result = await (fn as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        onOutcome?.(method, true);
        return result;
      } catch (err) {
        onOutcome?.(method, false);
        throw err;
      }
    });
    Object.defineProperty(wrapped, method, { value: call, enumerable: true });
  }
  return wrapped;
}
