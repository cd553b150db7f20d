// The one error type handlers throw. `app.onError` renders it in GoTrue's wire shapes.
export type WeakPasswordReason = 'length' | 'characters' | 'pwned';

export class ApiError extends Error {
  readonly status: number;
  readonly errorCode: string;
  /** Extra top-level fields of the error body (e.g. `weak_password`). */
  readonly extra: Record<string, unknown> | undefined;

  constructor(status: number, errorCode: string, message: string, extra?: Record<string, unknown>, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'ApiError';
    this.status = status;
    this.errorCode = errorCode;
    this.extra = extra;
  }
}

export const badRequest = (code: string, msg: string) => new ApiError(400, code, msg);
export const validationFailed = (msg: string) => new ApiError(400, 'validation_failed', msg);
export const unprocessable = (code: string, msg: string) => new ApiError(422, code, msg);
export const forbidden = (code: string, msg: string) => new ApiError(403, code, msg);
export const notFound = (code: string, msg: string) => new ApiError(404, code, msg);

export function weakPasswordError(message: string, reasons: WeakPasswordReason[]): ApiError {
  return new ApiError(422, 'weak_password', message, { weak_password: { reasons } });
}

/** GoTrue's answer when the address is another user's. */
export const emailExists = () =>
  new ApiError(422, 'email_exists', 'A user with this email address has already been registered');

/**
 * An OAuth error body `{error, error_description}`: GoTrue's OAuthError (400; the id_token and
 * web3 grants' refusals), and RFC 6749 §5.2 / RFC 6750 §3 answers of the OAuth server's endpoints,
 * which may carry another status (401 invalid_client, 500 server_error) and headers
 * (WWW-Authenticate).
 */
export class OAuthApiError extends Error {
  readonly status: number;
  readonly headers: Record<string, string> | undefined;

  constructor(
    readonly error: string,
    readonly description: string,
    cause?: unknown,
    opts: { status?: number; headers?: Record<string, string> } = {},
  ) {
    super(description, cause === undefined ? undefined : { cause });
    this.name = 'OAuthApiError';
    this.status = opts.status ?? 400;
    this.headers = opts.headers;
  }
}
