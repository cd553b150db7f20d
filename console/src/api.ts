// The only server the console talks to: the admin API of the service that served it, with the
// token the operator typed in. The token lives in this module's variable only: no cookie, no
// storage; a reload signs out.
let token: string | undefined;

/** The API root: the console's own path less `console/` (`/` or `/auth/v1/`). */
export const apiBase = (): string => location.pathname.replace(/console\/[^/]*$/, '');

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface Reply<T> {
  body: T;
  headers: Headers;
}

export const signedIn = (): boolean => token !== undefined;
export function setToken(t: string | undefined): void {
  token = t;
}

export async function call<T = unknown>(method: string, path: string, body?: unknown): Promise<Reply<T>> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(apiBase() + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'omit',
    cache: 'no-store',
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    json = { msg: text };
  }
  if (!res.ok) {
    const e = (json ?? {}) as Record<string, unknown>;
    const message = String(e.msg ?? e.message ?? e.error_description ?? e.error ?? `HTTP ${res.status}`);
    throw new ApiError(res.status, String(e.error_code ?? e.code ?? e.error ?? ''), message);
  }
  return { body: json as T, headers: res.headers };
}

export const describe = (e: unknown): string =>
  e instanceof ApiError
    ? `${e.message}${e.code ? ` (${e.code}, ${e.status})` : ` (${e.status})`}`
    : e instanceof Error
      ? e.message
      : String(e);
