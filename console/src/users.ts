// Users: the list (search: a substring of the email or full name, or exactly a whole email
// address or phone number; paging, sort), creating and inviting, and one user's page with its
// actions. Every call is an existing endpoint of the admin API.
import { call, describe } from './api.ts';
import {
  type Child,
  confirmDialog,
  field,
  h,
  jsonField,
  onSubmitOnce,
  PHONE_PATTERN,
  PHONE_TITLE,
  pretty,
  toast,
  when,
} from './dom.ts';
import { editUserForm, linkPanel } from './user-panels.ts';

type Json = Record<string, unknown>;
interface User extends Json {
  id: string;
  email?: string;
  phone?: string;
  created_at?: string;
  last_sign_in_at?: string;
  email_confirmed_at?: string;
  phone_confirmed_at?: string;
  banned_until?: string;
  deleted_at?: string;
  is_anonymous?: boolean;
  identities?: Json[];
  factors?: Json[];
}

/** The list's state survives going to a user and back (module memory, like the token). */
const list = { filter: '', page: 1, perPage: 20, ascending: false };

export const rerender = (): void => void window.dispatchEvent(new HashChangeEvent('hashchange'));
const str = (v: unknown): string => (typeof v === 'string' && v !== '' ? v : '—');
const isBanned = (u: User): boolean => !!u.banned_until && new Date(u.banned_until).getTime() > Date.now();

function status(u: User): HTMLElement {
  const tags: [string, string][] = [];
  if (u.deleted_at) tags.push(['deleted', 'bad']);
  if (isBanned(u)) tags.push(['banned', 'bad']);
  if (u.is_anonymous) tags.push(['anonymous', '']);
  if (u.email_confirmed_at || u.phone_confirmed_at) tags.push(['confirmed', 'ok']);
  else tags.push(['unconfirmed', 'warn']);
  return h(
    'span',
    { class: 'tags' },
    tags.map(([t, k]) => h('span', { class: `tag ${k}` }, t)),
  );
}

/** A whole address: one `@`, a dot after it, no spaces. */
const WHOLE_EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
/** A whole E.164 number: `+`, then up to 15 digits (spaces aside). */
const WHOLE_PHONE = /^\+[1-9][0-9]{6,14}$/;

/**
 * The list's search parameter: a whole address or E.164 number is looked up exactly
 * (`email=`, `phone=`: an index look-up); anything else is GoTrue's substring `filter`.
 */
function searchParam(text: string): [name: 'email' | 'phone' | 'filter', value: string] {
  if (WHOLE_EMAIL.test(text)) return ['email', text];
  if (WHOLE_PHONE.test(text.replaceAll(' ', ''))) return ['phone', text.replaceAll(' ', '')];
  return ['filter', text];
}

export async function usersView(): Promise<HTMLElement> {
  const q = new URLSearchParams({
    page: String(list.page),
    per_page: String(list.perPage),
    sort: `created_at ${list.ascending ? 'asc' : 'desc'}`,
  });
  if (list.filter) q.set(...searchParam(list.filter));
  const { body, headers } = await call<{ users: User[] }>('GET', `admin/users?${q}`);
  const total = Number(headers.get('X-Total-Count') ?? body.users.length);
  const pages = Math.max(1, Math.ceil(total / list.perPage));

  const search = h('input', {
    type: 'search',
    name: 'filter',
    value: list.filter,
    placeholder: 'email or full name contains…, or a whole email or +phone',
    'aria-label': 'Search by email or full name',
  });
  const sort = h(
    'select',
    { name: 'sort', 'aria-label': 'Sort' },
    h('option', { value: 'desc', selected: !list.ascending }, 'Newest first'),
    h('option', { value: 'asc', selected: list.ascending }, 'Oldest first'),
  );
  const perPage = h(
    'select',
    { name: 'per_page', 'aria-label': 'Users per page' },
    [10, 20, 50, 100].map((n) => h('option', { value: n, selected: n === list.perPage }, `${n} a page`)),
  );
  const form = h(
    'form',
    { class: 'toolbar', role: 'search' },
    search,
    sort,
    perPage,
    h('button', { type: 'submit' }, 'Search'),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    Object.assign(list, {
      filter: search.value.trim(),
      ascending: sort.value === 'asc',
      perPage: Number(perPage.value),
      page: 1,
    });
    rerender();
  });
  sort.addEventListener('change', () => form.requestSubmit());
  perPage.addEventListener('change', () => form.requestSubmit());

  const go = (page: number) => () => {
    list.page = page;
    rerender();
  };
  const rows = body.users.map((u) =>
    h(
      'tr',
      null,
      h(
        'td',
        { 'data-label': 'User' },
        h('a', { href: `#/users/${encodeURIComponent(u.id)}` }, u.email || u.phone || u.id),
      ),
      h('td', { 'data-label': 'Phone' }, str(u.phone)),
      h('td', { 'data-label': 'Created' }, when(u.created_at)),
      h('td', { 'data-label': 'Last sign-in' }, when(u.last_sign_in_at)),
      h('td', { 'data-label': 'Status' }, status(u)),
    ),
  );

  return h(
    'section',
    { 'aria-labelledby': 'users-title' },
    h(
      'div',
      { class: 'row between' },
      h('h1', { id: 'users-title' }, 'Users'),
      h('span', { class: 'muted', id: 'users-total' }, `${total} in all`),
    ),
    form,
    rows.length
      ? h(
          'table',
          { class: 'list' },
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              ['User', 'Phone', 'Created', 'Last sign-in', 'Status'].map((c) => h('th', { scope: 'col' }, c)),
            ),
          ),
          h('tbody', null, rows),
        )
      : h('p', { class: 'empty' }, list.filter ? 'No user matches.' : 'No users yet.'),
    h(
      'nav',
      { class: 'pager', 'aria-label': 'Pages' },
      h('button', { type: 'button', disabled: list.page <= 1, onclick: go(list.page - 1) }, '← Previous'),
      h('span', null, `Page ${list.page} of ${pages}`),
      h('button', { type: 'button', disabled: list.page >= pages, onclick: go(list.page + 1) }, 'Next →'),
    ),
    createForms(),
  );
}

function createForms(): HTMLElement {
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'off' });
  const phone = h('input', {
    type: 'tel',
    name: 'phone',
    autocomplete: 'off',
    pattern: PHONE_PATTERN,
    title: PHONE_TITLE,
  });
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'new-password' });
  const confirmed = h('input', { type: 'checkbox', name: 'email_confirm', checked: true });
  const meta = jsonField('user_metadata', undefined, 'User metadata');
  meta.control.setAttribute('placeholder', '{"name": "Ada"}');
  const error = h('p', { class: 'error', role: 'alert', id: 'create-error' });
  const create = h(
    'form',
    { class: 'card', id: 'create-user' },
    h('h2', null, 'Create a user'),
    field('Email', email),
    field('Phone', phone, 'E.164, e.g. +14155550123'),
    field('Password', password, 'Optional: without one the user signs in by link or code.'),
    h('label', { class: 'check' }, confirmed, ' Mark the email and phone as confirmed'),
    field('User metadata (JSON)', meta.control),
    error,
    h('button', { type: 'submit', class: 'primary' }, 'Create user'),
  );
  // An email or a phone number is needed: the browser says so before anything is sent.
  const needOne = () =>
    email.setCustomValidity(
      email.value.trim() || phone.value.trim() ? '' : 'Enter an email address or a phone number.',
    );
  email.addEventListener('input', needOne);
  phone.addEventListener('input', needOne);
  create.addEventListener('submit', needOne, { capture: true });
  onSubmitOnce(create, async () => {
    error.textContent = '';
    const body: Json = {};
    if (email.value.trim()) Object.assign(body, { email: email.value.trim(), email_confirm: confirmed.checked });
    if (phone.value.trim()) Object.assign(body, { phone: phone.value.trim(), phone_confirm: confirmed.checked });
    if (password.value) body.password = password.value;
    const metadata = meta.read();
    if (metadata) body.user_metadata = metadata;
    try {
      const { body: user } = await call<User>('POST', 'admin/users', body);
      toast(`Created ${user.email || user.phone || user.id}.`);
      location.hash = `#/users/${encodeURIComponent(user.id)}`;
    } catch (e) {
      error.textContent = `Could not create the user: ${describe(e)}`;
    }
  });

  const inviteEmail = h('input', { type: 'email', name: 'invite_email', required: true, autocomplete: 'off' });
  const inviteError = h('p', { class: 'error', role: 'alert' });
  const invite = h(
    'form',
    { class: 'card', id: 'invite-user' },
    h('h2', null, 'Invite by email'),
    field('Email', inviteEmail),
    inviteError,
    h('button', { type: 'submit' }, 'Send invitation'),
  );
  onSubmitOnce(invite, async () => {
    inviteError.textContent = '';
    try {
      await call('POST', 'invite', { email: inviteEmail.value.trim() });
      toast(`Invitation sent to ${inviteEmail.value.trim()}.`);
      rerender();
    } catch (e) {
      inviteError.textContent = `Could not invite: ${describe(e)}`;
    }
  });
  return h('div', { class: 'grid2' }, create, invite);
}

export function dl(pairs: [string, unknown][]): HTMLElement {
  return h(
    'dl',
    { class: 'facts' },
    pairs.map(([k, v]) => [
      h('dt', null, k),
      h('dd', null, (typeof v === 'string' && v !== '') || typeof v === 'number' ? String(v) : '—'),
    ]),
  );
}

export function table(cols: string[], rows: Json[], cell: (r: Json, c: string) => Child): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'empty' }, 'None.');
  return h(
    'table',
    { class: 'list' },
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        cols.map((c) => h('th', { scope: 'col' }, c)),
      ),
    ),
    h(
      'tbody',
      null,
      rows.map((r) =>
        h(
          'tr',
          null,
          cols.map((c) => h('td', { 'data-label': c }, cell(r, c))),
        ),
      ),
    ),
  );
}

export async function userView(id: string): Promise<HTMLElement> {
  const { body: u } = await call<User>('GET', `admin/users/${encodeURIComponent(id)}`);
  const factors = await call<Json[]>('GET', `admin/users/${encodeURIComponent(id)}/factors`).then(
    (r) => r.body,
    () => u.factors ?? [],
  );
  const sessions = await call<Json[]>('GET', `admin/users/${encodeURIComponent(id)}/sessions`).then(
    (r) => r.body,
    () => [],
  );
  const who = u.email || u.phone;
  const audit = who
    ? await call<Json[]>('GET', `admin/audit?per_page=10&query=${encodeURIComponent(`author:${who}`)}`).then(
        (r) => r.body,
        () => [],
      )
    : [];
  const path = `admin/users/${encodeURIComponent(u.id)}`;

  const act = (
    label: string,
    run: () => Promise<unknown>,
    done: string,
    opts: { confirm?: string; danger?: boolean; label?: string } = {},
  ) =>
    h(
      'button',
      {
        type: 'button',
        class: opts.danger ? 'danger' : '',
        'aria-label': opts.label ?? null,
        onclick: async () => {
          if (opts.confirm && !(await confirmDialog(`${label}?`, opts.confirm, label, opts.danger !== false))) return;
          try {
            await run();
            toast(done);
            rerender();
          } catch (e) {
            toast(`${label} failed: ${describe(e)}`, 'error');
          }
        },
      },
      label,
    );

  const duration = h(
    'select',
    { name: 'ban_duration', 'aria-label': 'Ban duration' },
    [
      ['1h', '1 hour'],
      ['24h', '1 day'],
      ['168h', '1 week'],
      ['720h', '30 days'],
      ['876000h', '100 years'],
    ].map(([v, l]) => h('option', { value: v }, l)),
  );
  const banned = isBanned(u);
  const actions = u.deleted_at
    ? h('p', { class: 'muted' }, 'This user is soft-deleted.')
    : h(
        'div',
        { class: 'actions' },
        u.email
          ? act(
              'Send magic link',
              () => call('POST', 'magiclink', { email: u.email }),
              `Magic link sent to ${u.email}.`,
            )
          : null,
        u.email
          ? act(
              'Send password recovery',
              () => call('POST', 'recover', { email: u.email }),
              `Recovery email sent to ${u.email}.`,
            )
          : null,
        (u.email && !u.email_confirmed_at) || (u.phone && !u.phone_confirmed_at)
          ? act(
              'Confirm',
              () => call('PUT', path, { email_confirm: !!u.email, phone_confirm: !!u.phone }),
              'Confirmed.',
            )
          : null,
        banned
          ? act('Unban', () => call('PUT', path, { ban_duration: 'none' }), 'Unbanned.', {
              confirm: 'The user can sign in again.',
              danger: false,
            })
          : h(
              'span',
              { class: 'inline' },
              duration,
              act('Ban', () => call('PUT', path, { ban_duration: duration.value }), 'Banned.', {
                confirm: 'The user cannot sign in or refresh a session until the ban ends.',
              }),
            ),
        act('Sign out everywhere', () => call('POST', `${path}/logout`), 'Every session of the user is ended.', {
          confirm: 'Every session and refresh token of this user is revoked.',
        }),
        act('Delete (soft)', () => call('DELETE', path, { should_soft_delete: true }), 'Soft-deleted.', {
          confirm: 'The user is anonymised and can no longer sign in; the row stays.',
        }),
        act(
          'Delete (hard)',
          async () => {
            await call('DELETE', path, { should_soft_delete: false });
            location.hash = '#/users';
          },
          'Deleted.',
          { confirm: 'The user and every identity, factor and session are removed for good.' },
        ),
      );

  return h(
    'section',
    { 'aria-labelledby': 'user-title', class: 'user' },
    h('p', null, h('a', { href: '#/users' }, '← Users')),
    h('div', { class: 'row between' }, h('h1', { id: 'user-title' }, who || u.id), status(u)),
    actions,
    u.deleted_at ? null : h('div', { class: 'grid2' }, editUserForm(u, rerender), linkPanel(u)),
    h(
      'div',
      { class: 'grid2' },
      h(
        'div',
        { class: 'card' },
        h('h2', null, 'Account'),
        dl([
          ['ID', u.id],
          ['Email', u.email],
          ['Phone', u.phone],
          ['Role', u.role],
          ['Audience', u.aud],
          ['Created', when(u.created_at)],
          ['Updated', when(u.updated_at)],
          ['Last sign-in', when(u.last_sign_in_at)],
          ['Email confirmed', when(u.email_confirmed_at)],
          ['Phone confirmed', when(u.phone_confirmed_at)],
          ['Banned until', u.banned_until ? when(u.banned_until) : '—'],
          ['Deleted', u.deleted_at ? when(u.deleted_at) : '—'],
        ]),
      ),
      h(
        'div',
        { class: 'card' },
        h('h2', null, 'User metadata'),
        h('pre', { class: 'json', id: 'user-metadata' }, pretty(u.user_metadata)),
        h('h2', null, 'App metadata'),
        h('pre', { class: 'json' }, pretty(u.app_metadata)),
      ),
    ),
    h(
      'div',
      { class: 'card' },
      h('h2', null, 'Identities'),
      table(['Provider', 'Email', 'Created', 'Last sign-in'], u.identities ?? [], (r, c) =>
        c === 'Provider'
          ? str(r.provider)
          : c === 'Email'
            ? str(r.email ?? (r.identity_data as Json | undefined)?.email)
            : when(c === 'Created' ? r.created_at : r.last_sign_in_at),
      ),
    ),
    h(
      'div',
      { class: 'card' },
      h('h2', null, 'MFA factors'),
      table(['Type', 'Name', 'Status', 'Created', ''], factors, (r, c) =>
        c === 'Type'
          ? str(r.factor_type)
          : c === 'Name'
            ? str(r.friendly_name)
            : c === 'Status'
              ? str(r.status)
              : c === 'Created'
                ? when(r.created_at)
                : act(
                    'Remove',
                    () => call('DELETE', `${path}/factors/${encodeURIComponent(String(r.id))}`),
                    `The ${str(r.factor_type)} factor is removed.`,
                    {
                      confirm: `The ${str(r.factor_type)} factor "${str(r.friendly_name)}" is deleted; the user can enrol a new one.`,
                      label: `Remove factor ${str(r.friendly_name)}`,
                    },
                  ),
      ),
    ),
    h(
      'div',
      { class: 'card', id: 'user-sessions' },
      h('h2', null, 'Sessions'),
      table(['Created', 'Last refreshed', 'AAL', 'User agent', 'IP', ''], sessions, (r, c) =>
        c === 'Created'
          ? when(r.created_at)
          : c === 'Last refreshed'
            ? when(r.refreshed_at)
            : c === 'AAL'
              ? str(r.aal)
              : c === 'User agent'
                ? str(r.user_agent)
                : c === 'IP'
                  ? str(r.ip)
                  : act(
                      'End',
                      () => call('DELETE', `${path}/sessions/${encodeURIComponent(String(r.id))}`),
                      'The session is ended.',
                      {
                        confirm: 'This session and its refresh token are revoked; the other sessions go on.',
                        label: `End the session of ${when(r.created_at)}`,
                      },
                    ),
      ),
    ),
    h(
      'div',
      { class: 'card' },
      h(
        'div',
        { class: 'row between' },
        h('h2', null, 'Recent audit entries by this user'),
        who ? h('a', { href: `#/audit/${encodeURIComponent(`author:${who}`)}` }, 'See all their entries') : null,
      ),
      table(['Time', 'Action', 'IP'], audit, (r, c) =>
        c === 'Time'
          ? when(r.created_at)
          : c === 'Action'
            ? str((r.payload as Json | undefined)?.action)
            : str(r.ip_address),
      ),
    ),
  );
}
