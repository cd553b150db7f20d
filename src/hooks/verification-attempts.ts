// The MFA and password verification attempt hooks (GoTrue: mfa.go verifyTOTPFactor /
// verifyPhoneFactor, token.go ResourceOwnerPasswordGrant): told whether an attempt was valid,
// they may reject it (a lock-out policy). They cannot turn an invalid attempt into a valid one.
import type { Executor } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import { invokeHook, unmarshalError } from './invoke.ts';

export type HookDecision = { reject: false } | { reject: true; message: string; logout: boolean };

const CONTINUE: HookDecision = { reject: false };
const MFA_DEFAULT = 'Further MFA verification attempts will be rejected.';
const PASSWORD_DEFAULT = 'Further password verification attempts will be rejected.';

/** Go's json.Unmarshal into the output struct: an object (or null) whose known fields have their types. */
function decodeOutput(output: unknown, fields: Record<string, 'string' | 'boolean'>): Record<string, unknown> {
  if (output === undefined || output === null) return {};
  if (typeof output !== 'object' || Array.isArray(output)) throw unmarshalError();
  const o = output as Record<string, unknown>;
  for (const [key, type] of Object.entries(fields)) {
    if (o[key] !== undefined && o[key] !== null && typeof o[key] !== type) throw unmarshalError();
  }
  return o;
}

/** HOOK_MFA_VERIFICATION_ATTEMPT; `ex`: the verification's transaction. A rejection logs the user out (the caller does, after it). */
export async function mfaAttemptDecision(
  deps: Deps,
  ex: Executor,
  a: { userId: string; factorId: string; factorType: string; valid: boolean; ip?: string },
): Promise<HookDecision> {
  const input = { user_id: a.userId, factor_id: a.factorId, factor_type: a.factorType, valid: a.valid };
  const out = decodeOutput(await invokeHook(deps, 'MFA_VERIFICATION_ATTEMPT', input, { ex, ip: a.ip }), {
    decision: 'string',
    message: 'string',
  });
  if (out.decision !== 'reject') return CONTINUE;
  return { reject: true, message: (out.message as string | undefined) || MFA_DEFAULT, logout: true };
}

/** HOOK_PASSWORD_VERIFICATION_ATTEMPT: after the password check of an existing, non-banned user with a password. */
export async function passwordAttemptDecision(
  deps: Deps,
  a: { userId: string; valid: boolean; ip?: string },
): Promise<HookDecision> {
  const raw = await invokeHook(
    deps,
    'PASSWORD_VERIFICATION_ATTEMPT',
    { user_id: a.userId, valid: a.valid },
    { ip: a.ip },
  );
  const out = decodeOutput(raw, { decision: 'string', message: 'string', should_logout_user: 'boolean' });
  if (out.decision !== 'reject') return CONTINUE;
  return {
    reject: true,
    message: (out.message as string | undefined) || PASSWORD_DEFAULT,
    logout: out.should_logout_user === true,
  };
}
