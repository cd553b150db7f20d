// A supabase-js client for tests, against a server process (a URL) or an in-process app.
import {
  type SupabaseClient,
  type SupabaseClientOptions,
  type WebSocketLikeConstructor,
  createClient,
} from '@supabase/supabase-js';

// Node 20 has no global WebSocket and supabase-js builds its realtime client eagerly; the tests
// never open a channel, so a transport that refuses to construct is enough.
const NoWebSocket = function NoWebSocket() {
  throw new Error('realtime is not used in these tests');
} as unknown as WebSocketLikeConstructor;

export interface ClientOptions {
  fetch?: typeof fetch;
  headers?: Record<string, string>;
  /** Merged over: no persisted session, no auto refresh, no session from the URL. */
  auth?: SupabaseClientOptions<'public'>['auth'];
}

export function supabaseClient(url: string, key: string, opts: ClientOptions = {}): SupabaseClient {
  return createClient(url, key, {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false, ...opts.auth },
    realtime: { transport: NoWebSocket },
    global: { ...(opts.fetch ? { fetch: opts.fetch } : {}), ...(opts.headers ? { headers: opts.headers } : {}) },
  });
}

/** A client whose requests go straight to `app.request` (no server process, no port). */
export function supabaseClientFor(
  app: { request(path: string, init?: RequestInit): Response | Promise<Response> },
  key = 'anon-key',
  opts: Omit<ClientOptions, 'fetch'> = {},
): SupabaseClient {
  const base = 'http://authsvc.test';
  const viaApp = (input: RequestInfo | URL, init?: RequestInit) =>
    Promise.resolve(app.request(String(input instanceof Request ? input.url : input).slice(base.length), init));
  return supabaseClient(base, key, { ...opts, fetch: viaApp });
}
