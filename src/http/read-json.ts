// Reading a request: the bounded body, JSON as Go's decoder reads it, and the edge checks that
// keep unstorable strings and deep nesting away from every flow.
import type { Context } from 'hono';
import * as z from 'zod';
import { requestTimedOut } from './deadline.ts';
import { ApiError } from '../core/errors.ts';
import { MAX_JSON_DEPTH } from '../core/limits.ts';

export const MAX_BODY_BYTES = 1024 * 1024;

/** U+0000 (Postgres text and jsonb refuse it) or a UTF-16 surrogate without its pair (not valid Unicode). */
const UNSTORABLE = /\u0000|\p{Cs}/u;

export function hasUnstorableChars(s: string): boolean {
  return UNSTORABLE.test(s);
}

const unstorable = (where: string) =>
  new ApiError(400, 'validation_failed', `${where} must not contain NUL characters or unpaired UTF-16 surrogates`);

/**
 * One iterative pass over a parsed body (a recursive one overflows on deep input): every key and
 * string must be storable, and nesting stays within MAX_JSON_DEPTH. Done at the edge, so no flow
 * sees such a value and none can half-write a record with it.
 */
export function checkJsonValue(root: unknown): void {
  const stack: Array<[unknown, number]> = [[root, 0]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (typeof value === 'string') {
      if (UNSTORABLE.test(value)) throw unstorable('Strings in the request body');
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) throw badJson('exceeded max depth');
    if (Array.isArray(value)) {
      for (const item of value) stack.push([item, depth + 1]);
      continue;
    }
    for (const [key, item] of Object.entries(value)) {
      if (UNSTORABLE.test(key)) throw unstorable('Keys in the request body');
      stack.push([item, depth + 1]);
    }
  }
}

/**
 * Middleware: the same rule for the path, as its parameters are decoded from it
 * (`/oauth/authorizations/%00`), and for every query parameter's name and value
 * (GET /verify?token=a%00b). One check for every route, so no path parameter reaches SQL unchecked.
 */
export async function checkRequestTarget(c: Context, next: () => Promise<void>): Promise<void> {
  // Hono's path is decoded already, but for sequences that are not UTF-8 (which stay encoded).
  const path = c.req.path;
  if (UNSTORABLE.test(path) || (path.includes('%') && UNSTORABLE.test(decodedPath(path))))
    throw unstorable('Path parameters');
  if (c.req.url.includes('?')) {
    for (const [key, values] of Object.entries(c.req.queries())) {
      if (UNSTORABLE.test(key) || values.some((v) => UNSTORABLE.test(v))) throw unstorable('Query parameters');
    }
  }
  await next();
}

/**
 * The path as route parameters see it. A `%` sequence that is not UTF-8 (`%ED%A0%80`, an encoded
 * surrogate) cannot be decoded into a parameter at all: it counts as unstorable.
 */
function decodedPath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return /%[89a-f][0-9a-f]/i.test(path) ? '\u0000' : path;
  }
}

/** A form body (application/x-www-form-urlencoded), with the rule of JSON bodies for its names and values. */
export async function readForm(c: Context): Promise<URLSearchParams> {
  const form = new URLSearchParams(await readBodyText(c));
  for (const [key, value] of form) {
    if (UNSTORABLE.test(key) || UNSTORABLE.test(value)) throw unstorable('Form values');
  }
  return form;
}

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

/**
 * Refuses a declared body over MAX_BODY_BYTES before any handler reads it. One within
 * DISCARD_BYTES of the limit is read and dropped first, so that the client, still writing, gets
 * the 413 instead of a reset; a larger one is answered at once.
 */
export async function limitDeclaredBody(c: Context, next: () => Promise<void>): Promise<void> {
  const declared = declaredLength(c) ?? 0;
  if (declared > MAX_BODY_BYTES) {
    const body = declared <= MAX_BODY_BYTES + DISCARD_BYTES ? c.req.raw.body : null;
    if (body) await discardRest(body.getReader(), deadlineSignal(c), 0);
    throw bodyTooLarge();
  }
  await next();
}

const deadlineSignal = (c: Context): AbortSignal | undefined =>
  (c.get('deadline') as AbortController | undefined)?.signal;

/** How much of an oversized chunked body is read and dropped so that the 413 reaches the client. */
export const DISCARD_BYTES = 8 * 1024 * 1024;

/**
 * Reads and drops the rest of an oversized body, up to DISCARD_BYTES more. Cancelling at once
 * makes the server close a socket the client is still writing to: the kernel then resets the
 * connection and the client often loses the 413 it was sent ("broken pipe"). Past the bound (or
 * the deadline) the stream is cancelled anyway: nobody is owed an unbounded upload.
 */
async function discardRest(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  signal: AbortSignal | undefined,
  seen: number,
): Promise<void> {
  let total = seen;
  while (total <= MAX_BODY_BYTES + DISCARD_BYTES && !signal?.aborted) {
    const { done, value } = await reader.read();
    if (done) return;
    total += value.byteLength;
  }
  await reader.cancel().catch(() => undefined);
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
  // Past API_MAX_REQUEST_DURATION the client has its 504: stop reading a stalled upload.
  const signal = deadlineSignal(c);
  const stop = () => {
    reader.cancel().catch(() => undefined);
  };
  signal?.addEventListener('abort', stop, { once: true });
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (signal?.aborted) throw requestTimedOut();
      if (done) break;
      total += value.byteLength;
      if (total > MAX_BODY_BYTES) {
        await discardRest(reader, signal, total);
        throw bodyTooLarge();
      }
      chunks.push(value);
    }
  } finally {
    signal?.removeEventListener('abort', stop);
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
  return parseJsonBody(await readBodyText(c), schema);
}

function parseJsonBody<S extends z.ZodObject>(text: string, schema: S): z.infer<S> {
  let raw: unknown;
  if (text.trim() === '') throw badJson('unexpected end of JSON input');
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw badJson((err as Error).message);
  }
  checkJsonValue(raw);
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
  const text = await readBodyText(c);
  if (text.trim() === '') {
    const parsed = schema.safeParse({});
    if (parsed.success) return parsed.data;
  }
  return parseJsonBody(text, schema);
}

// Go's JSON decoder: `null` for any field means "not given".
export const optStr = z
  .string()
  .nullish()
  .transform((v) => v ?? undefined);
export const optBool = z
  .boolean()
  .nullish()
  .transform((v) => v ?? undefined);
export const optRecord = z
  .record(z.string(), z.unknown())
  .nullish()
  .transform((v) => v ?? undefined);
