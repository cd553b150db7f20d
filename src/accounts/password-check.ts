// The password checks that need the outside world: the policy (password-policy.ts) plus, with
// PASSWORD_HIBP_ENABLED, Have I Been Pwned — GoTrue's checkPasswordStrength, reasons in its order.
import { isPwnedPassword } from '../crypto/hibp.ts';
import { type WeakPassword, assertPasswordLength, checkPasswordStrength } from '../crypto/password-policy.ts';
import type { Deps } from '../deps.ts';
import { ApiError, weakPasswordError } from '../core/errors.ts';
import { errorFields } from '../telemetry/logger.ts';

const PWNED_MESSAGE = 'Password is known to be weak and easy to guess, please choose a different one.';

/**
 * Everything wrong with `password` under the policy, or null. A look-up that fails is allowed
 * (with a warning) unless PASSWORD_HIBP_FAIL_CLOSED, where it is a 500; `failOpen` forces the
 * first (the password grant only reports weakness and must not stop a sign-in).
 */
export async function passwordWeakness(
  deps: Deps,
  password: string,
  opts: { failOpen?: boolean } = {},
): Promise<WeakPassword | null> {
  const policy = deps.config.password;
  const weak = checkPasswordStrength(password, policy);
  if (!policy.hibp.enabled) return weak;
  let pwned = false;
  try {
    pwned = await isPwnedPassword(password, {
      apiUrl: policy.hibp.apiUrl,
      userAgent: policy.hibp.userAgent,
      fetch: deps.fetch,
    });
  } catch (err) {
    if (policy.hibp.failClosed && !opts.failOpen) {
      throw new ApiError(
        500,
        'unexpected_failure',
        'Unable to perform password strength check with HaveIBeenPwned.org.',
        undefined,
        err,
      );
    }
    deps.logger.warn(
      'Unable to perform password strength check with HaveIBeenPwned.org, pwned passwords are being allowed',
      errorFields(err),
    );
  }
  if (!pwned) return weak;
  return {
    message: [weak?.message, PWNED_MESSAGE].filter(Boolean).join(' '),
    reasons: [...(weak?.reasons ?? []), 'pwned'],
  };
}

/** The check of a new password (signup, PUT /user, admin update, recovery): 400 over 72 bytes, 422 weak_password. */
export async function assertNewPassword(deps: Deps, password: string): Promise<void> {
  assertPasswordLength(password);
  const weak = await passwordWeakness(deps, password);
  if (weak) throw weakPasswordError(weak.message, weak.reasons);
}
