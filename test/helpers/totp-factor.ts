// A verified TOTP factor for a signed-in user, through the HTTP API (enrol, challenge, verify with
// the test's own RFC 6238 code at the app's clock): the factor, its key, and the aal2 session.
import { expect } from 'vitest';
import type { TestApp } from './app.ts';
import { decodeBase32, totpAt } from './totp.ts';

type Json = Record<string, any>;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Challenges and verifies `factorId` with the current code: the session's aal2 tokens. A code works once: move the clock 30 s between two. */
export async function stepUp(t: TestApp, accessToken: string, factorId: string, key: Buffer): Promise<Json> {
  const challenge = (await (
    await t.request('POST', `/factors/${factorId}/challenge`, {}, bearer(accessToken))
  ).json()) as Json;
  const code = totpAt(key, t.deps.now().getTime() / 1000);
  const verified = await t.request(
    'POST',
    `/factors/${factorId}/verify`,
    { challenge_id: challenge.id, code },
    bearer(accessToken),
  );
  expect(verified.status, await verified.clone().text()).toBe(200);
  return (await verified.json()) as Json;
}

export async function verifiedTotp(
  t: TestApp,
  accessToken: string,
): Promise<{ factorId: string; key: Buffer; aal2: Json }> {
  const enrolled = await t.request(
    'POST',
    '/factors',
    { factor_type: 'totp', friendly_name: `app ${Math.random()}` },
    bearer(accessToken),
  );
  expect(enrolled.status, await enrolled.clone().text()).toBe(200);
  const factor = (await enrolled.json()) as Json;
  const key = decodeBase32(factor.totp.secret);
  return { factorId: factor.id, key, aal2: await stepUp(t, accessToken, factor.id, key) };
}
