// GET /sessions, DELETE /sessions/{session_id} — not GoTrue routes (flows/sessions.ts): the
// signed-in user's own sessions, and ending one. An OAuth client's token is refused (requireAuth).
import { endOwnSession, listOwnSessions } from '../flows/sessions.ts';
import { notFound } from '../core/errors.ts';
import { requestMeta } from '../http/request-meta.ts';
import { routeGroup } from '../http/route.ts';
import { parseUuid } from '../http/uuid.ts';
import { json } from '../openapi/parts.ts';

export const sessionRoutes = routeGroup('user');

sessionRoutes.route(
  {
    method: 'get',
    path: '/sessions',
    summary: "The signed-in user's live sessions, newest first (not a GoTrue route; no tokens)",
    auth: 'user',
    replies: { 200: json('SessionList') },
  },
  async (c) => {
    return c.json({ sessions: await listOwnSessions(c.get('deps'), c.get('auth')) });
  },
);

sessionRoutes.route(
  {
    method: 'delete',
    path: '/sessions/{session_id}',
    summary: 'End one of your sessions (not a GoTrue route; aal2 for another session when MFA is on)',
    auth: 'user',
    replies: {
      204: { description: 'The session and its refresh tokens are gone; the current one is a local sign-out.' },
      401: {
        description: '`insufficient_aal`: another session, a verified factor exists and this session is aal1.',
        error: true,
      },
      404: {
        description: "`session_not_found`: not a session of yours; `validation_failed`: the id isn't a UUID.",
        error: true,
      },
    },
  },
  async (c) => {
    const id = parseUuid(c.req.param('session_id'));
    if (!id) throw notFound('validation_failed', 'session_id must be an UUID');
    await endOwnSession(c.get('deps'), c.get('auth'), id, requestMeta(c));
    return c.body(null, 204);
  },
);
