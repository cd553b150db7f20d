// Rows written the way GoTrue writes them (models/user.go, identity.go, sessions.go,
// refresh_token.go): empty strings in the token columns, phone without '+', legacy refresh
// tokens of 12 characters in clear, signed-token sessions with a key and a counter. Tokens of
// the signed format are built here with node:crypto, apart from src/, so a test of the reader
// is not a test of itself.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import bcrypt from 'bcryptjs';
import type { Database } from '../../src/db/database.ts';

export const NIL = '00000000-0000-0000-0000-000000000000';

/** A SQL literal (test data only). */
export function lit(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v instanceof Date) return `'${v.toISOString()}'`;
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return `'${s.replaceAll("'", "''")}'`;
}

export const exec = (db: Database, sql: string) => db.withSession((s) => s.exec(sql));

/** GoTrue's legacy token: 12 characters of lower-case base32 (crypto.SecureAlphanumeric(12)). */
export function legacyToken(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  return Array.from(randomBytes(12), (b) => alphabet[b & 31]).join('');
}

export interface GoTrueUser {
  id: string;
  email: string | null;
  phone: string | null;
  password: string;
}

/** A confirmed user with an email and/or phone identity, as GoTrue's signup + confirm leave it. */
export async function insertGoTrueUser(
  db: Database,
  u: { email?: string | null; phone?: string | null; password?: string; at?: Date; appMeta?: Record<string, unknown> },
): Promise<GoTrueUser> {
  const ns = `"${db.namespace}"`;
  const id = crypto.randomUUID();
  const at = u.at ?? new Date(Date.now() - 86_400_000);
  const password = u.password ?? 'gotrue-password-1';
  const hash = bcrypt.hashSync(password, 10).replace(/^\$2b\$/, '$2a$'); // Go's bcrypt writes $2a$
  const email = u.email ?? null;
  const phone = u.phone ?? null;
  const providers = [...(email ? ['email'] : []), ...(phone ? ['phone'] : [])];
  const appMeta = u.appMeta ?? { provider: providers[0], providers };
  await exec(
    db,
    `
    insert into ${ns}.users (instance_id, id, aud, role, email, encrypted_password, email_confirmed_at, invited_at,
      confirmation_token, confirmation_sent_at, recovery_token, recovery_sent_at, email_change_token_new, email_change,
      email_change_sent_at, last_sign_in_at, raw_app_meta_data, raw_user_meta_data, is_super_admin, created_at, updated_at,
      phone, phone_confirmed_at, phone_change, phone_change_token, phone_change_sent_at, email_change_token_current,
      email_change_confirm_status, banned_until, reauthentication_token, reauthentication_sent_at, is_sso_user, deleted_at, is_anonymous)
    values (${lit(NIL)}, ${lit(id)}, 'authenticated', 'authenticated', ${lit(email)}, ${lit(hash)},
      ${email ? lit(at) : 'NULL'}, NULL, '', ${email ? lit(at) : 'NULL'}, '', NULL, '', '', NULL, ${lit(at)},
      ${lit(appMeta)}, '{}', NULL, ${lit(at)}, ${lit(at)},
      ${lit(phone)}, ${phone ? lit(at) : 'NULL'}, '', '', NULL, '', 0, NULL, '', NULL, false, NULL, false)`,
  );
  if (email) {
    await exec(
      db,
      `insert into ${ns}.identities (provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at, id)
      values (${lit(id)}, ${lit(id)}, ${lit({ sub: id, email, email_verified: false, phone_verified: false })}, 'email',
        ${lit(at)}, ${lit(at)}, ${lit(at)}, gen_random_uuid())`,
    );
  }
  if (phone) {
    await exec(
      db,
      `insert into ${ns}.identities (provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at, id)
      values (${lit(id)}, ${lit(id)}, ${lit({ sub: id, phone, email_verified: false, phone_verified: false })}, 'phone',
        ${lit(at)}, ${lit(at)}, ${lit(at)}, gen_random_uuid())`,
    );
  }
  return { id, email, phone, password };
}

export interface GoTrueSessionOpts {
  at?: Date;
  refreshedAt?: Date | null;
  /** Signed (version 2) sessions: the key as stored (base64url, or an encrypted string) and the counter. */
  hmacKey?: string;
  counter?: number;
}

/** A session with its AMR claim (password), as GoTrue's sign-in leaves it. */
export async function insertGoTrueSession(db: Database, userId: string, o: GoTrueSessionOpts = {}): Promise<string> {
  const ns = `"${db.namespace}"`;
  const id = crypto.randomUUID();
  const at = o.at ?? new Date(Date.now() - 3_600_000);
  const refreshed = o.refreshedAt === undefined ? at : o.refreshedAt;
  // GoTrue before v2.181 has no refresh_token_* columns: named only for a signed session.
  const signed = o.hmacKey !== undefined;
  await exec(
    db,
    `
    insert into ${ns}.sessions (id, user_id, created_at, updated_at, factor_id, aal, not_after, refreshed_at, user_agent, ip, tag
      ${signed ? ', refresh_token_hmac_key, refresh_token_counter' : ''})
    values (${lit(id)}, ${lit(userId)}, ${lit(at)}, ${lit(at)}, NULL, 'aal1', NULL,
      ${refreshed ? `${lit(refreshed)}::timestamptz at time zone 'UTC'` : 'NULL'}, 'Go-http-client/1.1', '192.0.2.1', NULL
      ${signed ? `, ${lit(o.hmacKey)}, ${o.counter ?? 0}` : ''});
    insert into ${ns}.mfa_amr_claims (session_id, created_at, updated_at, authentication_method, id)
    values (${lit(id)}, ${lit(at)}, ${lit(at)}, 'password', gen_random_uuid())`,
  );
  return id;
}

/** A legacy refresh-token row: the token in clear, the parent's token in clear (NULL for the first). */
export async function insertLegacyToken(
  db: Database,
  r: { userId: string; sessionId: string | null; token: string; parent?: string | null; revoked?: boolean; at?: Date },
): Promise<void> {
  const at = r.at ?? new Date(Date.now() - 3_600_000);
  await exec(
    db,
    `insert into "${db.namespace}".refresh_tokens (instance_id, token, user_id, revoked, created_at, updated_at, parent, session_id)
    values (${lit(NIL)}, ${lit(r.token)}, ${lit(r.userId)}, ${r.revoked ?? false}, ${lit(at)}, ${lit(at)}, ${lit(r.parent ?? null)}, ${lit(r.sessionId)})`,
  );
}

/** A chain of legacy tokens of one session, oldest first; every one but the last revoked. */
export async function insertLegacyChain(
  db: Database,
  userId: string,
  sessionId: string,
  n: number,
  at?: Date,
): Promise<string[]> {
  const tokens = Array.from({ length: n }, legacyToken);
  for (const [i, token] of tokens.entries()) {
    await insertLegacyToken(db, {
      userId,
      sessionId,
      token,
      parent: i === 0 ? null : tokens[i - 1]!,
      revoked: i < n - 1,
      at,
    });
  }
  return tokens;
}

/** A fresh signing key as GoTrue stores it (unpadded base64url of 32 bytes). */
export const signingKey = (): string => randomBytes(32).toString('base64url');

/** GoTrue's signed refresh token of `sessionId` at `counter` (crypto.RefreshToken.Encode). */
export function signedToken(sessionId: string, counter: number, keyBase64Url: string): string {
  const varint: number[] = [];
  let v = BigInt(counter);
  while (v >= 0x80n) {
    varint.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  varint.push(Number(v));
  const head = Buffer.concat([
    Buffer.from([0]),
    Buffer.from(sessionId.replaceAll('-', ''), 'hex'),
    Buffer.from(varint),
  ]);
  const sig = createHmac('sha256', Buffer.from(keyBase64Url, 'base64url')).update(head).digest().subarray(0, 16);
  const body = Buffer.concat([head, sig]);
  const checksum = createHash('sha256').update(body).digest().subarray(0, 4);
  return Buffer.concat([body, checksum]).toString('base64url');
}

/** GoTrue's stored hash of an emailed or texted code: hex sha224(address + code) (crypto.GenerateTokenHash). */
export const gotrueTokenHash = (address: string, code: string): string =>
  createHash('sha224')
    .update(address + code)
    .digest('hex');

export type GoTrueOttType =
  | 'confirmation_token'
  | 'reauthentication_token'
  | 'recovery_token'
  | 'email_change_token_new'
  | 'email_change_token_current'
  | 'phone_change_token';

/**
 * The one_time_tokens row GoTrue (v2.151 on) writes next to each users.*_token (CreateOneTimeToken):
 * relates_to lower-cased, timestamps as a Go server in UTC stores them in the zone-less columns.
 */
export async function insertGoTrueOneTimeToken(
  db: Database,
  r: { userId: string; type: GoTrueOttType; tokenHash: string; relatesTo: string; at: Date },
): Promise<void> {
  const at = `${lit(r.at)}::timestamptz at time zone 'UTC'`;
  await exec(
    db,
    `insert into "${db.namespace}".one_time_tokens (id, user_id, token_type, token_hash, relates_to, created_at, updated_at)
    values (gen_random_uuid(), ${lit(r.userId)}, ${lit(r.type)}, ${lit(r.tokenHash)}, ${lit(r.relatesTo.toLowerCase())}, ${at}, ${at})`,
  );
}

/**
 * A user GoTrue's POST /invite left pending (api/invite.go + sendInvite): no password, unconfirmed,
 * invited_at and confirmation_sent_at set, confirmation_token = sha224(email + code), its email
 * identity; with `ott`, the one_time_tokens row too.
 */
export async function insertGoTrueInvite(
  db: Database,
  email: string,
  code: string,
  sentAt: Date,
  ott: boolean,
): Promise<GoTrueUser> {
  const u = await insertGoTrueUser(db, { email, at: sentAt });
  const hash = gotrueTokenHash(email, code);
  await exec(
    db,
    `update "${db.namespace}".users set encrypted_password = '', email_confirmed_at = NULL, last_sign_in_at = NULL,
    invited_at = ${lit(sentAt)}, confirmation_token = ${lit(hash)}, confirmation_sent_at = ${lit(sentAt)} where id = ${lit(u.id)}`,
  );
  if (ott)
    await insertGoTrueOneTimeToken(db, {
      userId: u.id,
      type: 'confirmation_token',
      tokenHash: hash,
      relatesTo: email,
      at: sentAt,
    });
  return { ...u, password: '' };
}

const std = (b: Uint8Array) => Buffer.from(b).toString('base64');
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** A credential as GoTrue's WebAuthn ceremonies know it: raw id, COSE public key, AAGUID, sign count. */
export interface GoTrueWebauthnKey {
  id: Uint8Array;
  cose: Uint8Array;
  aaguid: string;
  signCount: number;
  backupEligible?: boolean;
  backedUp?: boolean;
}

/**
 * go-webauthn's Credential as GoTrue stores it in mfa_factors.web_authn_credential (Go's
 * encoding/json: []byte as padded standard base64), with the attestation it was registered with.
 */
export function goWebauthnCredential(k: GoTrueWebauthnKey): Record<string, unknown> {
  const aaguid = Buffer.from(k.aaguid.replaceAll('-', ''), 'hex');
  return {
    id: std(k.id),
    publicKey: std(k.cose),
    attestationType: 'none',
    attestationFormat: 'none',
    transport: ['usb', 'nfc'],
    flags: {
      userPresent: true,
      userVerified: true,
      backupEligible: k.backupEligible ?? false,
      backupState: k.backedUp ?? false,
    },
    authenticator: { AAGUID: std(aaguid), signCount: k.signCount, cloneWarning: false, attachment: 'cross-platform' },
    attestation: {
      type: 'webauthn.create',
      format: 'none',
      clientDataJSON: std(randomBytes(120)),
      clientDataHash: std(randomBytes(32)),
      authenticatorData: std(randomBytes(164)),
      publicKeyAlgorithm: -7,
      object: std(randomBytes(200)),
    },
  };
}

/** A verified WebAuthn MFA factor as GoTrue's verifyWebAuthnFactor leaves it (v2.196's columns). */
export async function insertGoTrueWebauthnFactor(
  db: Database,
  userId: string,
  k: GoTrueWebauthnKey,
  name = 'YubiKey',
): Promise<string> {
  const id = crypto.randomUUID();
  const at = new Date(Date.now() - 86_400_000);
  const last = {
    type: 'create',
    challenge: {
      challenge_id: crypto.randomUUID(),
      factor_id: id,
      created_at: at.toISOString(),
      ip_address: '192.0.2.1',
    },
    credential_response: {},
  };
  await exec(
    db,
    `insert into "${db.namespace}".mfa_factors (id, user_id, friendly_name, factor_type, status, created_at, updated_at,
      web_authn_credential, web_authn_aaguid, last_webauthn_challenge_data)
    values (${lit(id)}, ${lit(userId)}, ${lit(name)}, 'webauthn', 'verified', ${lit(at)}, ${lit(at)},
      ${lit(goWebauthnCredential(k))}, ${lit(k.aaguid)}, ${lit(last)})`,
  );
  return id;
}

/** A passkey row as GoTrue's NewWebAuthnCredential writes it into webauthn_credentials (raw bytea id and COSE key). */
export async function insertGoTruePasskey(
  db: Database,
  userId: string,
  k: GoTrueWebauthnKey,
  name = 'iCloud Keychain',
): Promise<string> {
  const id = crypto.randomUUID();
  const at = new Date(Date.now() - 86_400_000);
  await exec(
    db,
    `insert into "${db.namespace}".webauthn_credentials (id, user_id, credential_id, public_key, attestation_type, aaguid,
      sign_count, transports, backup_eligible, backed_up, friendly_name, created_at, updated_at, last_used_at)
    values (${lit(id)}, ${lit(userId)}, decode('${hex(k.id)}', 'hex'), decode('${hex(k.cose)}', 'hex'), 'none', ${lit(k.aaguid)},
      ${k.signCount}, '["internal","hybrid"]', ${k.backupEligible ?? false}, ${k.backedUp ?? false}, ${lit(name)}, ${lit(at)}, ${lit(at)}, NULL)`,
  );
  return id;
}
