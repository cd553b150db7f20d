// Audit log, settings and health: read-only screens.
import { call } from './api.ts';
import { h, when } from './dom.ts';
import { rerender } from './users.ts';

type Json = Record<string, unknown>;
const str = (v: unknown): string => (typeof v === 'string' && v !== '' ? v : '—');

const audit = { scope: '', text: '', page: 1, perPage: 50 };

/** `preset`: `scope:text` from the address (#/audit/author:ada@example.com), as a user's page links it. */
export async function auditView(preset?: string): Promise<HTMLElement> {
  const m = preset ? /^(author|action|type):(.+)$/.exec(preset) : null;
  if (m) Object.assign(audit, { scope: m[1], text: m[2], page: 1 });
  const q = new URLSearchParams({ page: String(audit.page), per_page: String(audit.perPage) });
  if (audit.scope && audit.text) q.set('query', `${audit.scope}:${audit.text}`);
  const { body, headers } = await call<Json[]>('GET', `admin/audit?${q}`);
  const total = Number(headers.get('X-Total-Count') ?? body.length);
  const pages = Math.max(1, Math.ceil(total / audit.perPage));

  const scope = h(
    'select',
    { name: 'scope', 'aria-label': 'Filter on' },
    [
      ['', 'Everything'],
      ['author', 'Author (email or phone)'],
      ['action', 'Action'],
      ['type', 'Type'],
    ].map(([v, l]) => h('option', { value: v, selected: v === audit.scope }, l)),
  );
  const text = h('input', {
    type: 'search',
    name: 'text',
    value: audit.text,
    placeholder: 'contains…',
    'aria-label': 'Filter text',
  });
  const form = h('form', { class: 'toolbar', role: 'search' }, scope, text, h('button', { type: 'submit' }, 'Filter'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    Object.assign(audit, { scope: scope.value, text: text.value.trim(), page: 1 });
    if (location.hash !== '#/audit') location.hash = '#/audit';
    else rerender();
  });
  const go = (page: number) => () => {
    audit.page = page;
    rerender();
  };
  const rows = body.map((e) => {
    const p = (e.payload ?? {}) as Json;
    const traits = (p.traits ?? {}) as Json;
    const target = traits.user_email ?? traits.user_phone ?? traits.user_id ?? traits.provider;
    return h(
      'tr',
      null,
      h('td', { 'data-label': 'Time', class: 'nowrap' }, when(e.created_at)),
      h('td', { 'data-label': 'Action' }, h('code', null, str(p.action))),
      h('td', { 'data-label': 'Type' }, str(p.log_type)),
      h('td', { 'data-label': 'Actor', class: 'nowrap' }, str(p.actor_username || p.actor_id)),
      h('td', { 'data-label': 'Target', class: 'nowrap' }, str(target)),
      h('td', { 'data-label': 'IP', class: 'nowrap' }, str(e.ip_address)),
    );
  });
  return h(
    'section',
    { 'aria-labelledby': 'audit-title' },
    h(
      'div',
      { class: 'row between' },
      h('h1', { id: 'audit-title' }, 'Audit log'),
      h('span', { class: 'muted' }, `${total} entries`),
    ),
    form,
    rows.length
      ? h(
          'table',
          { class: 'list', id: 'audit-table' },
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              ['Time', 'Action', 'Type', 'Actor', 'Target', 'IP'].map((c) => h('th', { scope: 'col' }, c)),
            ),
          ),
          h('tbody', null, rows),
        )
      : h('p', { class: 'empty' }, 'No entries.'),
    h(
      'nav',
      { class: 'pager', 'aria-label': 'Pages' },
      h('button', { type: 'button', disabled: audit.page <= 1, onclick: go(audit.page - 1) }, '← Newer'),
      h('span', null, `Page ${audit.page} of ${pages}`),
      h('button', { type: 'button', disabled: audit.page >= pages, onclick: go(audit.page + 1) }, 'Older →'),
    ),
  );
}

interface Effective {
  started_at: string;
  variables: { name: string; value: unknown; secret: boolean; set: boolean }[];
}

export async function settingsView(): Promise<HTMLElement> {
  const [{ body: settings }, { body: effective }] = await Promise.all([
    call<Json>('GET', 'settings'),
    call<Effective>('GET', 'admin/config'),
  ]);
  const external = (settings.external ?? {}) as Record<string, boolean>;
  const on = Object.keys(external)
    .filter((k) => external[k])
    .sort();
  const filter = h('input', {
    type: 'search',
    name: 'config_filter',
    placeholder: 'name contains…',
    'aria-label': 'Filter settings by name',
  });
  const onlySet = h('input', { type: 'checkbox', name: 'only_set', checked: true });
  const body = h('tbody');
  const show = () => {
    const needle = filter.value.trim().toUpperCase();
    body.replaceChildren(
      ...effective.variables
        .filter((v) => (!onlySet.checked || v.set) && v.name.includes(needle))
        .map((v) =>
          h(
            'tr',
            null,
            h('td', { 'data-label': 'Setting' }, h('code', null, v.name)),
            h(
              'td',
              { 'data-label': 'Value', class: v.secret ? 'secret' : '' },
              typeof v.value === 'string' ? v.value : JSON.stringify(v.value),
            ),
          ),
        ),
    );
  };
  filter.addEventListener('input', show);
  onlySet.addEventListener('change', show);
  show();
  return h(
    'section',
    { 'aria-labelledby': 'settings-title' },
    h('h1', { id: 'settings-title' }, 'Settings'),
    h(
      'div',
      { class: 'grid2' },
      h(
        'div',
        { class: 'card' },
        h('h2', null, 'Sign-in methods on'),
        on.length
          ? h(
              'ul',
              { class: 'chips' },
              on.map((p) => h('li', null, p)),
            )
          : h('p', { class: 'empty' }, 'None.'),
      ),
      h(
        'div',
        { class: 'card' },
        h('h2', null, 'Public settings (GET /settings)'),
        h(
          'dl',
          { class: 'facts' },
          Object.entries(settings)
            .filter(([k]) => k !== 'external')
            .map(([k, v]) => [h('dt', null, k), h('dd', null, String(v))]),
        ),
      ),
    ),
    h(
      'div',
      { class: 'card' },
      h('h2', null, 'Effective configuration (secrets masked)'),
      h('div', { class: 'toolbar' }, filter, h('label', { class: 'check' }, onlySet, ' Only settings that are set')),
      h(
        'table',
        { class: 'list config' },
        h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Setting'), h('th', { scope: 'col' }, 'Value'))),
        body,
      ),
    ),
  );
}

function duration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const d = Math.floor(s / 86400);
  const hh = Math.floor((s % 86400) / 3600);
  const mm = Math.floor((s % 3600) / 60);
  return `${d ? `${d}d ` : ''}${hh}h ${mm}m ${s % 60}s`;
}

export async function healthView(): Promise<HTMLElement> {
  // GET /health/ready asks the database (and whether every migration is applied); GET /health,
  // GoTrue's, only that the server answers, with its version.
  const started = performance.now();
  let ready = false;
  let problem = '';
  try {
    await call<Json>('GET', 'health/ready');
    ready = true;
  } catch (e) {
    problem = e instanceof Error ? e.message : String(e);
  }
  const took = Math.round(performance.now() - started);
  const health = await call<Json>('GET', 'health').then(
    (r) => r.body,
    () => undefined,
  );
  const { body: effective } = await call<Effective>('GET', 'admin/config');
  const up = Date.now() - new Date(effective.started_at).getTime();
  return h(
    'section',
    { 'aria-labelledby': 'health-title' },
    h('h1', { id: 'health-title' }, 'Health'),
    h(
      'div',
      { class: 'card' },
      h(
        'p',
        { class: `big ${ready ? 'ok' : 'bad'}`, id: 'health-status' },
        ready ? 'Healthy: the database answers' : `Unhealthy: ${problem}`,
      ),
      h(
        'dl',
        { class: 'facts' },
        h('dt', null, 'Version'),
        h('dd', null, str(health?.version)),
        h('dt', null, 'Up since'),
        h('dd', null, `${when(effective.started_at)} (${duration(up)})`),
        h('dt', null, 'GET /health/ready took'),
        h('dd', null, `${took} ms`),
      ),
    ),
    h('p', null, h('button', { type: 'button', onclick: rerender }, 'Check again')),
  );
}
