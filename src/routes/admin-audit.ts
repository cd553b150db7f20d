// GET /admin/audit — GoTrue: api.adminAuditLog (admin roles only)
import { pageBounds, paginationHeaders, parsePage } from '../admin/pagination.ts';
import { AUDIT_SCOPES, type AuditRow, findAuditEntries } from '../db/audit-query.ts';
import { validationFailed } from '../core/errors.ts';
import { routeGroup } from '../http/route.ts';
import { json, paging, pagingHeaders } from '../openapi/parts.ts';

/** Go serialises the payload map with its keys sorted, nested maps too. */
function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
    );
  }
  return v;
}

function entryJson(e: AuditRow): Record<string, unknown> {
  return {
    id: e.id,
    payload: sortKeys(e.payload ?? {}),
    created_at: e.createdAt?.toISOString(),
    ip_address: e.ipAddress,
  };
}

export const adminAuditRoutes = routeGroup('admin');

adminAuditRoutes.route(
  {
    method: 'get',
    path: '/admin/audit',
    summary: 'Audit log',
    gotrue: 'adminAuditLog',
    auth: 'admin',
    query: [...paging, { name: 'query', description: '`scope:text`, scope one of author, action, type.' }],
    replies: {
      200: { ...json({ type: 'array', items: { $ref: '#/components/schemas/AuditEntry' } }), headers: pagingHeaders },
    },
  },
  async (c) => {
    // Paging exactly as GET /admin/users: GoTrue's paginate() and addPaginationHeaders.
    const page = parsePage(c.req.query('page'), c.req.query('per_page'));
    const query = c.req.query('query') ?? '';
    let fields: readonly string[] | undefined;
    let text: string | undefined;
    if (query !== '') {
      const sep = query.indexOf(':');
      const scope = sep < 0 ? query : query.slice(0, sep);
      fields = Object.hasOwn(AUDIT_SCOPES, scope) ? AUDIT_SCOPES[scope] : undefined;
      if (!fields || sep < 0) throw validationFailed(`Invalid query scope: ${query}`);
      text = query.slice(sep + 1);
    }
    const { entries, total } = await findAuditEntries(c.get('deps').db, { fields, text, ...pageBounds(page) });
    const { link, totalCount } = paginationHeaders(c.req.url, page, total);
    return c.json(entries.map(entryJson), 200, { Link: link, 'X-Total-Count': totalCount });
  },
);
