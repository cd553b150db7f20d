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

/** GoTrue's OAuthError: 400 with `{error, error_description}` (the id_token grant's refusals). */
export class OAuthApiError extends Error {
  constructor(readonly error: string, readonly description: string, cause?: unknown) {
    super(description, cause === undefined ? undefined : { cause });
    this.name = 'OAuthApiError';
  }
}
