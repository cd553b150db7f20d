// What a verified assertion says about the user (GoTrue: api/samlassertion.go): the user id (the
// subject-id attribute, else a NameID that is not transient), the email (the mapping, else
// well-known attributes, else an emailAddress NameID), and the attribute mapping
// `{"keys": {"<claim>": {"name" | "names", "default", "array"}}}`.
import type { SamlAssertion } from '../crypto/saml-xml.ts';
import { NAMEID_EMAIL, NAMEID_TRANSIENT } from './sp.ts';

const SUBJECT_ID = 'urn:oasis:names:tc:SAML:attribute:subject-id';
const EMAIL_ATTRIBUTES = [
  'urn:oid:0.9.2342.19200300.100.1.3',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
  'http://schemas.xmlsoap.org/claims/EmailAddress',
  'mail',
  'Mail',
  'email',
];

export interface AttributeMapper {
  name?: string;
  names?: string[];
  default?: unknown;
  array?: boolean;
}

export interface AttributeMapping {
  keys?: Record<string, AttributeMapper>;
}

/** The values of the attributes whose Name or FriendlyName is `name` (case-insensitive). */
export function attributeValues(a: SamlAssertion, name: string): string[] {
  const lower = name.toLowerCase();
  return a.attributes
    .filter((x) => x.name.toLowerCase() === lower || x.friendlyName?.toLowerCase() === lower)
    .flatMap((x) => x.values);
}

export function samlUserId(a: SamlAssertion): string {
  const subject = attributeValues(a, SUBJECT_ID);
  if (subject.length > 0) return subject[0]!;
  const n = a.nameId;
  if (!n?.value) return '';
  if (n.format === NAMEID_EMAIL) return n.value.trim().toLowerCase();
  return n.format === NAMEID_TRANSIENT ? '' : n.value;
}

export function samlEmail(a: SamlAssertion): string {
  for (const name of EMAIL_ATTRIBUTES) {
    const v = attributeValues(a, name).find((x) => x !== '');
    if (v) return v;
  }
  return a.nameId?.format === NAMEID_EMAIL ? a.nameId.value : '';
}

/** GoTrue's Process: each key takes the first non-empty value of its first matching name. */
export function mapAttributes(a: SamlAssertion, mapping: AttributeMapping | null | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, m] of Object.entries(mapping?.keys ?? {})) {
    const names = [...(m.name ? [m.name] : []), ...(m.names ?? [])];
    let found = false;
    for (const name of names) {
      for (const v of attributeValues(a, name)) {
        if (v === '') continue;
        found = true;
        if (m.array) out[key] = [...((out[key] as string[] | undefined) ?? []), v];
        else {
          out[key] = v;
          break;
        }
      }
      if (found) break;
    }
    if (!found && m.default !== undefined && m.default !== null) out[key] = m.default;
  }
  return out;
}
