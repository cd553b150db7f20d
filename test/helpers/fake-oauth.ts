// A fake identity provider on a local port: answers the routes a test gives it and records every
// request (method, path with query, headers, body, parsed form), so tests assert the exact request
// authsvc sent. `routedFetch` sends a provider's fixed public hosts (those GoTrue does not let
// EXTERNAL_<P>_URL move) to the fake instead, recording the URL that was asked for.
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  method: string;
  /** Path and query as received. */
  path: string;
  /** For requests that came through routedFetch: the URL authsvc asked for. */
  url?: string;
  headers: IncomingMessage['headers'];
  body: string;
  form: Record<string, string>;
}

export interface FakeAnswer {
  status?: number;
  /** An object is sent as JSON; a string as is. */
  body?: unknown;
  headers?: Record<string, string>;
}

export type FakeRoute = (req: SeenRequest) => FakeAnswer | Promise<FakeAnswer>;

export interface FakeProvider {
  /** http://127.0.0.1:<port>, no trailing slash. */
  base: string;
  requests: SeenRequest[];
  /** "GET /path" (path without query) → handler; replace entries freely between tests. */
  routes: Map<string, FakeRoute>;
  close(): Promise<void>;
}

export async function startFakeProvider(routes: Record<string, FakeRoute> = {}): Promise<FakeProvider> {
  const requests: SeenRequest[] = [];
  const table = new Map(Object.entries(routes));
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => {
      body += d;
    });
    req.on('end', async () => {
      const seen: SeenRequest = {
        method: req.method!,
        path: req.url!,
        headers: req.headers,
        body,
        form: Object.fromEntries(new URLSearchParams(body)),
        url: typeof req.headers['x-fake-original-url'] === 'string' ? req.headers['x-fake-original-url'] : undefined,
      };
      requests.push(seen);
      const route = table.get(`${req.method} ${req.url!.split('?')[0]}`);
      const answer: FakeAnswer = route
        ? await route(seen)
        : { status: 404, body: { error: 'no such route in the fake' } };
      const isText = typeof answer.body === 'string';
      res.writeHead(answer.status ?? 200, {
        'content-type': isText ? 'text/plain' : 'application/json',
        ...answer.headers,
      });
      res.end(isText ? (answer.body as string) : JSON.stringify(answer.body ?? {}));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    requests,
    routes: table,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/**
 * A fetch that sends requests for the given hosts (e.g. 'appleid.apple.com') to the fake,
 * keeping path and query; every other URL goes out unchanged (to other local fakes).
 */
export function routedFetch(fake: FakeProvider, hosts: string[]): typeof fetch {
  return (async (input: RequestInfo | URL, init?: RequestInit) => {
    const original = new URL(input instanceof Request ? input.url : String(input));
    if (!hosts.includes(original.host)) return fetch(input, init);
    const target = `${fake.base}${original.pathname}${original.search}`;
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    headers.set('x-fake-original-url', original.href);
    return fetch(target, { ...init, headers });
  }) as typeof fetch;
}

/** The `state` a /authorize redirect carries (OAuth 2), or the one inside its callback URL (OAuth 1.0a). */
export function stateOf(location: string): string {
  const u = new URL(location);
  return u.searchParams.get('state') ?? '';
}

/**
 * One provider's run through authorize → callback → session, written next to the provider's own
 * tests and replayed by the app-level OAuth tests for every provider.
 */
export interface ProviderScenario {
  provider: string;
  /** Starts the fake with the routes that provider's sign-in needs (token, user info, JWKS, …). */
  start(): Promise<{
    fake: FakeProvider;
    /** GOTRUE_EXTERNAL_<P>_* for this fake: ENABLED, CLIENT_ID, SECRET, REDIRECT_URI, and URL where GoTrue honours it. */
    env: Record<string, string>;
    /** Set when some of the provider's hosts are fixed (see routedFetch). */
    fetch?: typeof fetch;
  }>;
  /** What the provider sends to /callback besides `state` (`code`, Apple's `user`, Twitter's oauth_token/oauth_verifier). */
  callback: { method: 'GET' | 'POST'; params: Record<string, string> };
  /** The exact requests the provider saw (token, user info, …), given the /authorize redirect. */
  checkRequests?(requests: SeenRequest[], authorizeLocation: URL, fake: FakeProvider): void;
  /** What the session's user must then hold. */
  expected: {
    /** identities[].id / provider_id. */
    sub: string;
    /** users.email; undefined when the provider gave none. */
    email?: string;
    emailVerified: boolean;
    /** identity_data, exactly, as GoTrue stores it (claimsToData of the provider's claims). */
    identityData: Record<string, unknown>;
    /** The provider access token handed back as provider_token. */
    providerToken: string;
    providerRefreshToken?: string;
  };
}
