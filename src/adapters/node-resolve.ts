// Every address a host name resolves to, for the custom providers' SSRF guard (oauth/url-guard.ts);
// Bun and Deno run node:dns too.
import { lookup } from 'node:dns/promises';
import type { ResolveHost } from '../oauth/url-guard.ts';

export const nodeResolveHost: ResolveHost = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);
