// Ids in paths and bodies, read as GoTrue reads them (gofrs/uuid FromString).
import { notFound } from '../core/errors.ts';

const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HEX32 = /^[0-9a-f]{32}$/i;

/** gofrs/uuid FromString: canonical, `{braced}`, `urn:uuid:` and bare 32-hex forms; lower-case canonical out. */
export function parseUuid(raw: string): string | null {
  let s = raw;
  if (s.startsWith('urn:uuid:')) s = s.slice(9);
  else if (s.length === 38 && s.startsWith('{') && s.endsWith('}')) s = s.slice(1, -1);
  let hex: string;
  if (CANONICAL_UUID.test(s)) hex = s.replaceAll('-', '');
  else if (HEX32.test(s)) hex = s;
  else return null;
  hex = hex.toLowerCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** `{user_id}` of the admin routes (GoTrue's loadUser): not a UUID → 404 validation_failed. */
export function userIdParam(raw: string): string {
  const id = parseUuid(raw);
  if (!id) throw notFound('validation_failed', 'user_id must be an UUID');
  return id;
}
