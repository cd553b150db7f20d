// Calls a hook (GoTrue: v0hooks.Manager.InvokeHook): builds the common input (`metadata`), picks
// the transport from HOOK_<KIND>_URI, and applies the error object. Each call is a span and one
// log line with the hook's name, transport, outcome and duration (never the URI, the payload or
// a secret: an https URI may carry a token).
import type { HookKind } from '../config/kinds.ts';
import { callHookFunction } from '../db/hooks.ts';
import { type Database, type Executor, transaction } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import { ApiError } from '../core/errors.ts';
import { withSpan } from '../telemetry/tracing.ts';
import { hookErrorOf } from './error-object.ts';
import { callHttpHook } from './http.ts';

/** GoTrue's hook names (`metadata.name`). */
export const HOOK_NAMES: Record<HookKind, string> = {
  SEND_SMS: 'send-sms',
  SEND_EMAIL: 'send-email',
  CUSTOM_ACCESS_TOKEN: 'customize-access-token',
  MFA_VERIFICATION_ATTEMPT: 'mfa-verification',
  PASSWORD_VERIFICATION_ATTEMPT: 'password-verification',
  BEFORE_USER_CREATED: 'before-user-created',
  AFTER_USER_CREATED: 'after-user-created',
};

/** GoTrue's statement timeout of a Postgres-function hook. */
export const PG_HOOK_TIMEOUT_MS = 2000;

export interface HookCall {
  /** The client's address (`metadata.ip_address`), when known. */
  ip?: string;
  /**
   * The request's transaction: a Postgres-function hook runs inside it (its refusal or failure
   * takes back what the request wrote). Without one, or given the database itself, the function
   * runs in a transaction of its own.
   */
  ex?: Executor;
}

export const unmarshalError = () => new ApiError(500, 'unexpected_failure', 'Error unmarshaling JSON output.');

/**
 * Calls the `kind` hook with `input` (the fields after `metadata`). Resolves to its parsed answer
 * (undefined for an empty one); throws the hook's error object as an ApiError, or GoTrue's error
 * for a failed call.
 */
export function invokeHook(
  deps: Deps,
  kind: HookKind,
  input: Record<string, unknown>,
  call: HookCall = {},
): Promise<unknown> {
  const cfg = deps.config.hooks[kind];
  const name = HOOK_NAMES[kind];
  const target = cfg.target;
  // GoTrue: an enabled hook without a usable URI fails every call with a plain (500) error.
  if (!target)
    return Promise.reject(
      new Error(`unsupported protocol for hook ${name}: only postgres hooks and HTTPS functions are supported`),
    );
  const metadata: Record<string, unknown> = { uuid: crypto.randomUUID(), time: deps.now().toISOString(), name };
  // GoTrue's NewMetadata reads the request's address for every hook kind.
  const ip = call.ip ?? deps.clientIp;
  if (ip) metadata.ip_address = ip;
  const payload = JSON.stringify({ metadata, ...input });
  const started = performance.now();
  const attributes = { 'hook.name': name, 'hook.transport': target.transport };
  return withSpan(deps.traceParent, `hook ${name}`, attributes, async () => {
    try {
      const text =
        target.transport === 'http'
          ? await callHttpHook(deps, target.url, cfg.secrets, payload)
          : await callPgHook(deps, call.ex, cfg.uri, target.schema, target.fn, payload);
      const output = parseOutput(text);
      deps.logger.info('Hook ran successfully', { ...logFields(name, target.transport, started), success: true });
      return output;
    } catch (err) {
      const status = err instanceof ApiError ? err.status : 500;
      deps.logger.warn('Hook errored out', { ...logFields(name, target.transport, started), success: false, status });
      throw err;
    }
  });
}

const logFields = (name: string, transport: string, started: number) => ({
  action: 'run_hook',
  hook: name,
  transport,
  duration_us: Math.round((performance.now() - started) * 1000),
});

function parseOutput(text: string | null | undefined): unknown {
  if (text === undefined || text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw unmarshalError();
  }
}

async function callPgHook(
  deps: Deps,
  ex: Executor | undefined,
  uri: string,
  schema: string,
  fn: string,
  payload: string,
): Promise<string | null> {
  const run = async (tx: Executor): Promise<string | null> => {
    let text: string | null;
    try {
      text = await callHookFunction(tx, schema, fn, payload, PG_HOOK_TIMEOUT_MS);
    } catch (err) {
      throw new ApiError(500, 'unexpected_failure', `Error running hook URI: ${uri}`, undefined, err);
    }
    const refused = text === null ? undefined : hookErrorOf(safeParse(text));
    if (refused) throw refused;
    return text;
  };
  // A Database has `begin`; a transaction does not (db/database.ts transaction()).
  if (!ex || (ex as Partial<Database>).begin) return transaction(ex ?? deps.db, run);
  return run(ex);
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
