// How a call to an OAuth/OIDC provider fails: what the flows map to GoTrue's errors.

/** A provider call that failed; `message` names what failed, never a secret or token. */
export class ProviderError extends Error {
  override name = 'ProviderError';
}

/** A provider call that did not answer in time (its own timeout, or the flow's budget ran out). */
export class ProviderTimeout extends ProviderError {
  override name = 'ProviderTimeout';
}

/** The token endpoint's OAuth error answer (RFC 6749 §5.2): its `error` code and `error_description`. */
export class TokenRefusal extends ProviderError {
  override name = 'TokenRefusal';

  constructor(
    message: string,
    readonly error: string,
    readonly description: string,
  ) {
    super(message);
  }
}
