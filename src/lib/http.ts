// Request parsing and error rendering in GoTrue's wire shapes.
import type { Context } from 'hono';
import { z } from 'zod';
import { ApiError } from './errors.ts';

export const MAX_BODY_BYTES = 1024 * 1024;
export const API_VERSION_2024 = '2024-01-01';

/** GoTrue: a `YYYY-MM-DD` value ≥ 2024-01-01 selects the 2024 error shape. */
export function wantsApiVersion2024(header: string | undefined): boolean {
  if (!header || !/^\d{4}-\d{2}-\d{2}$/.test(header)) return false;
  return header >= API_VERSION_2024;
}

export function errorBody(err: ApiError, v2024: boolean, requestId?: string): Record<string, unknown> {
  if (v2024) return { code: err.errorCode, message: err.message, ...err.extra };
  const body: Record<string, unknown> = { code: err.status, error_code: err.errorCode, msg: err.message, ...err.extra };
  if (err.status >= 500 && requestId) body.error_id = requestId;
  return body;
}

export const unexpectedFailure = () =>
  new ApiError(500, 'unexpected_failure', 'Unexpected failure, please check server logs for more information');

function badJson(detail: string): ApiError {
  return new ApiError(400, 'bad_json', `Could not parse request body as JSON: ${detail}`);
}

/** Go's encoding/json matches keys case-insensitively; so do we, exact names first. */
function foldKeys(input: Record<string, unknown>, known: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const byLower = new Map(known.map((k) => [k.toLowerCase(), k]));
  for (const [k, v] of Object.entries(input)) {
    if (k in out && !known.includes(k)) continue;
    const target = known.includes(k) ? k : byLower.get(k.toLowerCase());
    if (target === undefined) continue; // unknown keys are ignored
    if (target !== k && target in input) continue; // an exact match wins
    out[target] = v;
  }
  return out;
}

export const bodyTooLarge = () =>
  new ApiError(413, 'request_entity_too_large', `Request body too large (max ${MAX_BODY_BYTES} bytes)`);

/** A declared Content-Length, when it is the only framing of the body. */
function declaredLength(c: Context): number | undefined {
  const len = c.req.header('content-length');
  if (len === undefined || c.req.header('transfer-encoding') !== undefined || !/^\d{1,15}$/.test(len)) return undefined;
  return Number(len);
}

/** Refuses a declared body over MAX_BODY_BYTES before anything reads it. */
export async function limitDeclaredBody(c: Context, next: () => Promise<void>): Promise<void> {
  if ((declaredLength(c) ?? 0) > MAX_BODY_BYTES) throw bodyTooLarge();
  await next();
}

/**
 * The body as text, never more than MAX_BODY_BYTES. With a Content-Length the server's HTTP
 * parser stops there, and the adapter's own fast reader is used (on Node it skips building a
 * web Request and stream). Without one (chunked), the stream is counted while it is read.
 */
export async function readBodyText(c: Context): Promise<string> {
  const declared = declaredLength(c);
  if (declared !== undefined) {
    if (declared > MAX_BODY_BYTES) throw bodyTooLarge();
    return c.req.text();
  }
  const body = c.req.raw.body;
  if (!body) return '';
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw bodyTooLarge();
    }
    chunks.push(value);
  }
  const all = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  return new TextDecoder().decode(all);
}

/** Reads the JSON body: bad JSON → 400 bad_json; wrong types → 400 bad_json (as Go's decoder). */
export async function readJson<S extends z.ZodObject>(c: Context, schema: S): Promise<z.infer<S>> {
  const text = await readBodyText(c);
  let raw: unknown;
  if (text.trim() === '') throw badJson('unexpected end of JSON input');
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw badJson((err as Error).message);
  }
  if (raw === null) raw = {};
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw badJson(`json: cannot unmarshal ${Array.isArray(raw) ? 'array' : typeof raw} into Go value of type object`);
  }
  const folded = foldKeys(raw as Record<string, unknown>, Object.keys(schema.shape));
  const parsed = schema.safeParse(folded);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join('.') || 'body';
    throw badJson(`json: cannot unmarshal into field ${field}: ${issue?.message ?? 'invalid value'}`);
  }
  return parsed.data;
}

/** Like readJson, but an empty body counts as `{}` (endpoints where GoTrue allows it). */
export async function readOptionalJson<S extends z.ZodObject>(c: Context, schema: S): Promise<z.infer<S>> {
  const text = await c.req.raw.clone().text();
  if (text.trim() === '') {
    const parsed = schema.safeParse({});
    if (parsed.success) return parsed.data;
  }
  return readJson(c, schema);
}

// Go's JSON decoder: `null` for any field means "not given".
export const optStr = z.string().nullish().transform((v) => v ?? undefined);
export const optBool = z.boolean().nullish().transform((v) => v ?? undefined);
export const optRecord = z.record(z.string(), z.unknown()).nullish().transform((v) => v ?? undefined);
