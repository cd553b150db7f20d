// The custom access token hook (GoTrue: tokens/service.go GenerateAccessToken): every access
// token issued (sign-in of any kind, refresh, MFA verify) passes its claims to the hook, whose
// `claims` are signed verbatim once they hold GoTrue's minimum claims with the right types.
// `expires_in`/`expires_at` of the response still come from the server's own claims.
import type { Executor } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import { ApiError } from '../core/errors.ts';
import { invokeHook, unmarshalError } from './invoke.ts';

export interface AccessTokenIssue {
  userId: string;
  /** The AMR method of this issuance (`password`, `token_refresh`, `totp`, `mfa/phone`, …). */
  method: string;
  ip?: string;
}

/** The claims to sign: the hook's answer, checked. Throws GoTrue's 500s for a bad answer. */
export async function customizeAccessToken(
  deps: Deps,
  ex: Executor,
  issue: AccessTokenIssue,
  claims: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  let output: unknown;
  try {
    output = await invokeHook(
      deps,
      'CUSTOM_ACCESS_TOKEN',
      { user_id: issue.userId, claims, authentication_method: issue.method },
      { ex, ip: issue.ip },
    );
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw new ApiError(500, 'unexpected_failure', 'error generating jwt token', undefined, err);
  }
  const out = outputClaims(output);
  const problems = claimProblems(out);
  if (problems.length > 0) {
    throw new ApiError(
      500,
      '',
      `output claims do not conform to the expected schema: \n${problems.map((p) => `- ${p}\n`).join('')}`,
    );
  }
  return out as Record<string, unknown>;
}

/** GoTrue's CustomAccessTokenOutput.UnmarshalJSON: `claims` must be there; null stays null (and fails the schema). */
function outputClaims(output: unknown): unknown {
  // An empty answer (204) is never decoded: the claims stay unset.
  if (output === undefined) return null;
  if (output !== null && (typeof output !== 'object' || Array.isArray(output))) throw unmarshalError();
  if (output === null || !('claims' in output)) throw new ApiError(500, '', 'output claims field is missing');
  const claims = (output as { claims: unknown }).claims;
  if (claims !== null && (typeof claims !== 'object' || Array.isArray(claims))) throw unmarshalError();
  return claims;
}

// GoTrue's MinimumViableTokenSchema: these claims must be present…
const REQUIRED = ['aud', 'exp', 'iat', 'sub', 'email', 'phone', 'role', 'aal', 'session_id', 'is_anonymous'];
// …and, when present, of these JSON types (in the schema's order).
const TYPES: [string, string[]][] = [
  ['aud', ['string', 'array']],
  ['exp', ['integer']],
  ['jti', ['string']],
  ['iat', ['integer']],
  ['iss', ['string']],
  ['nbf', ['integer']],
  ['sub', ['string']],
  ['email', ['string']],
  ['phone', ['string']],
  ['app_metadata', ['object']],
  ['user_metadata', ['object']],
  ['role', ['string']],
  ['aal', ['string']],
  ['amr', ['array']],
  ['session_id', ['string']],
  ['client_id', ['string']],
];

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** Schema violations in gojsonschema's wording ("<field>: <description>"), as GoTrue lists them. */
export function claimProblems(claims: unknown): string[] {
  if (jsonType(claims) !== 'object') return [`(root): Invalid type. Expected: object, given: ${jsonType(claims)}`];
  const c = claims as Record<string, unknown>;
  const problems = REQUIRED.filter((k) => !(k in c)).map((k) => `(root): ${k} is required`);
  for (const [key, types] of TYPES) {
    if (!(key in c)) continue;
    const given = jsonType(c[key]);
    // JSON Schema's "integer" is also a "number"; none of these allow a plain number.
    if (!types.includes(given)) {
      const expected = types.length > 1 ? `[${types.join(',')}]` : types[0];
      problems.push(`${key}: Invalid type. Expected: ${expected}, given: ${given}`);
    }
  }
  if (Array.isArray(c.amr)) {
    c.amr.forEach((entry, i) => {
      const t = jsonType(entry);
      if (t !== 'string' && t !== 'object') problems.push(`amr.${i}: Must validate at least one schema (anyOf)`);
    });
  }
  return problems;
}
