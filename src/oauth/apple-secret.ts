// Sign in with Apple's client secret, signed by authsvc (GoTrue takes it ready-made as
// EXTERNAL_APPLE_SECRET): an ES256 JWT under the team's .p8 key, `kid` its key id, `iss` the team,
// `sub` the client id, `aud` Apple. One hour long; kept per app (OAuthContext.clientSecrets, keyed
// by the settings alone) and signed again once less than 5 minutes of it are left.
import { importPKCS8, SignJWT } from 'jose';
import type { AppleSigningKey, OAuthContext, ProviderSettings, SignedSecret } from './provider.ts';

const APPLE_AUDIENCE = 'https://appleid.apple.com';
/** Apple allows six months; an hour keeps a leaked secret short-lived and costs one signature an hour. */
const APPLE_SECRET_LIFETIME = 3600;
/** A secret with less left than this is not sent: it could expire on the way. */
const APPLE_SECRET_MARGIN = 300;

type SecretContext = Pick<OAuthContext, 'now' | 'clientSecrets'>;

async function sign(key: AppleSigningKey, clientId: string, iat: number): Promise<SignedSecret> {
  const exp = iat + APPLE_SECRET_LIFETIME;
  const jwt = await new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: key.keyId })
    .setIssuer(key.teamId)
    .setSubject(clientId)
    .setAudience(APPLE_AUDIENCE)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .sign(await importPKCS8(key.privateKey, 'ES256'));
  return { jwt, exp };
}

/** EXTERNAL_APPLE_SECRET when it is set, else a client secret signed with the key (cached). */
export async function appleClientSecret(ctx: SecretContext, s: ProviderSettings): Promise<string> {
  const key = s.signingKey;
  if (s.secret || !key) return s.secret;
  const clientId = s.clientIds[0] ?? '';
  const cacheKey = [key.teamId, key.keyId, clientId, key.privateKey].join('\n');
  const now = Math.floor(ctx.now().getTime() / 1000);
  const cached = ctx.clientSecrets.get(cacheKey);
  if (cached) {
    const secret = await cached.catch(() => undefined);
    if (secret && now < secret.exp - APPLE_SECRET_MARGIN) return secret.jwt;
  }
  // One signature for concurrent sign-ins; a failed one is not kept.
  const pending = sign(key, clientId, now);
  ctx.clientSecrets.set(cacheKey, pending);
  pending.catch(() => {
    if (ctx.clientSecrets.get(cacheKey) === pending) ctx.clientSecrets.delete(cacheKey);
  });
  return (await pending).jwt;
}
