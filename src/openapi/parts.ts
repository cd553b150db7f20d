// The OpenAPI vocabulary route declarations share: common query parameters, paging headers and
// the usual replies (http/route.ts's Reply and Param).
import type { Param, Reply } from '../http/route.ts';

type Schema = Record<string, unknown>;

export const str = { type: 'string' };
export const redirectTo: Param = {
  name: 'redirect_to',
  description:
    "Where the link or redirect leads; honoured for SITE_URL's host or a URI_ALLOW_LIST match, else SITE_URL. Also read from a `redirect_to` header.",
};
export const paging: Param[] = [
  { name: 'page', description: 'Page number (default 1).', schema: { type: 'string', pattern: '^[0-9]+$' } },
  { name: 'per_page', description: 'Page size (default 50).', schema: { type: 'string', pattern: '^[0-9]+$' } },
];
export const pagingHeaders = {
  Link: 'RFC 8288 links to the next and last pages.',
  'X-Total-Count': 'Total rows matching.',
};
export const redirect = (description: string): Reply => ({ description, headers: { Location: 'The target.' } });
export const json = (schema: string | Schema, description = 'OK'): Reply => ({ description, schema });
export const empty = json('Empty');
export const oneOf = (...names: string[]): Schema => ({
  oneOf: names.map((n) => ({ $ref: `#/components/schemas/${n}` })),
});
/** GoTrue's error body with this description. */
export const error = (description: string): Reply => ({ description, error: true });
