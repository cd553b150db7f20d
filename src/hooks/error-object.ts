// The error object a hook may answer with (GoTrue: hookserrors.Check), on both transports:
// `{"error":{"http_code":N,"message":"…"}}` with a non-empty message aborts the request with N
// and that message, and no error code (the client sees `unknown`, or `unexpected_failure` for 500).
import { ApiError } from '../core/errors.ts';

/** The error the hook asked for, or undefined when `output` carries none (an empty message counts as none). */
export function hookErrorOf(output: unknown): ApiError | undefined {
  if (typeof output !== 'object' || output === null || Array.isArray(output)) return undefined;
  const error = (output as { error?: unknown }).error;
  if (typeof error !== 'object' || error === null || Array.isArray(error)) return undefined;
  const { http_code: code, message } = error as { http_code?: unknown; message?: unknown };
  if (typeof message !== 'string' || message === '') return undefined;
  // GoTrue writes any code it is given (0 or absent: 500). A code outside 400–599 would make an
  // error look like a success (or crash the response writer): it is answered as 500 instead.
  const status = typeof code === 'number' && Number.isInteger(code) && code >= 400 && code <= 599 ? code : 500;
  return new ApiError(status, '', message);
}
