// A user's page, the panels that change the user: edit (PUT /admin/users/{id}) and links made by
// the admin API (POST /admin/generate_link), shown once in the page and never stored or logged.
import { call, describe } from './api.ts';
import { field, h, jsonField, onSubmitOnce, PHONE_PATTERN, PHONE_TITLE, toast } from './dom.ts';

type Json = Record<string, unknown>;
interface EditableUser extends Json {
  id: string;
  email?: string;
  phone?: string;
  email_confirmed_at?: string;
  phone_confirmed_at?: string;
  user_metadata?: Json;
  app_metadata?: Json;
}

/**
 * What to send for metadata edited from `before` to `after`: the admin API merges top-level keys
 * and removes those sent as null (GoTrue's UpdateUserMetaData), so a key deleted in the form is
 * sent as null. Undefined when nothing changed.
 */
function changes(before: Json | undefined, after: unknown): Json | undefined {
  const next = (after ?? {}) as Json;
  const prev = before ?? {};
  const out: Json = {};
  for (const [k, v] of Object.entries(next)) if (JSON.stringify(v) !== JSON.stringify(prev[k])) out[k] = v;
  for (const k of Object.keys(prev)) if (!(k in next)) out[k] = null;
  return Object.keys(out).length ? out : undefined;
}

/** The edit form: only what changed is sent; the API's refusal is shown in the form. */
export function editUserForm(u: EditableUser, done: () => void): HTMLElement {
  const email = h('input', { type: 'email', name: 'email', value: u.email ?? '', autocomplete: 'off' });
  const phone = h('input', {
    type: 'tel',
    name: 'phone',
    value: u.phone ?? '',
    autocomplete: 'off',
    pattern: PHONE_PATTERN,
    title: PHONE_TITLE,
  });
  const emailConfirm = h('input', { type: 'checkbox', name: 'email_confirm', checked: !!u.email_confirmed_at });
  const phoneConfirm = h('input', { type: 'checkbox', name: 'phone_confirm', checked: !!u.phone_confirmed_at });
  const userMeta = jsonField('user_metadata', u.user_metadata ?? {}, 'User metadata');
  const appMeta = jsonField('app_metadata', u.app_metadata ?? {}, 'App metadata');
  const error = h('p', { class: 'error', role: 'alert', id: 'edit-error' });
  const form = h(
    'form',
    { class: 'card', id: 'edit-user', 'aria-labelledby': 'edit-title' },
    h('h2', { id: 'edit-title' }, 'Edit'),
    field('Email', email),
    field('Phone', phone, 'E.164, e.g. +14155550123'),
    h('label', { class: 'check' }, emailConfirm, ' Email confirmed'),
    h('label', { class: 'check' }, phoneConfirm, ' Phone confirmed'),
    field('User metadata (JSON)', userMeta.control),
    field('App metadata (JSON)', appMeta.control, 'A key deleted here is deleted from the user.'),
    error,
    h('button', { type: 'submit', class: 'primary' }, 'Save changes'),
  );
  onSubmitOnce(form, async () => {
    error.textContent = '';
    const body: Json = {};
    if (email.value.trim() !== (u.email ?? '')) body.email = email.value.trim();
    if (phone.value.trim() !== (u.phone ?? '')) body.phone = phone.value.trim();
    if (emailConfirm.checked && !u.email_confirmed_at) body.email_confirm = true;
    if (phoneConfirm.checked && !u.phone_confirmed_at) body.phone_confirm = true;
    try {
      const um = changes(u.user_metadata, userMeta.read());
      const am = changes(u.app_metadata, appMeta.read());
      if (um) body.user_metadata = um;
      if (am) body.app_metadata = am;
    } catch {
      error.textContent = 'The metadata must be JSON objects.';
      return;
    }
    if (Object.keys(body).length === 0) {
      error.textContent = 'Nothing changed.';
      return;
    }
    try {
      await call('PUT', `admin/users/${encodeURIComponent(u.id)}`, body);
      toast('Saved.');
      done();
    } catch (e) {
      error.textContent = `Not saved: ${describe(e)}`;
    }
  });
  return form;
}

const LINKS: [string, string][] = [
  ['magiclink', 'Magic link'],
  ['recovery', 'Password recovery link'],
  ['invite', 'Invite link'],
];

/**
 * Links made by the admin API without an email being sent (GoTrue's generate_link): the link
 * shows in a read-only field with a copy button until the page changes; it is never written to
 * the console, storage or the URL.
 */
export function linkPanel(u: EditableUser): HTMLElement | null {
  if (!u.email) return null;
  const type = h(
    'select',
    { name: 'link_type', 'aria-label': 'Link type' },
    LINKS.map(([v, l]) => h('option', { value: v }, l)),
  );
  const out = h('div', { class: 'link-out', id: 'generated-link' });
  const form = h(
    'form',
    { class: 'card', id: 'generate-link', 'aria-labelledby': 'links-title' },
    h('h2', { id: 'links-title' }, 'Generate a link'),
    h('p', { class: 'muted' }, 'No email is sent: hand the link over yourself. It is shown here once.'),
    h('div', { class: 'toolbar' }, type, h('button', { type: 'submit' }, 'Generate')),
    out,
  );
  onSubmitOnce(form, async () => {
    out.replaceChildren();
    try {
      const { body } = await call<{ action_link?: string }>('POST', 'admin/generate_link', {
        type: type.value,
        email: u.email,
      });
      const link = body.action_link ?? '';
      const input = h('input', { type: 'text', readonly: true, value: link, 'aria-label': 'Generated link' });
      const copy = h(
        'button',
        {
          type: 'button',
          onclick: async () => {
            try {
              await navigator.clipboard.writeText(link);
              toast('Link copied.');
            } catch {
              input.select();
              toast('Select the link and copy it (the browser refused the clipboard).', 'error');
            }
          },
        },
        'Copy',
      );
      out.append(h('div', { class: 'toolbar' }, input, copy));
      toast(`${LINKS.find(([v]) => v === type.value)?.[1] ?? 'Link'} generated.`);
    } catch (e) {
      out.append(h('p', { class: 'error', role: 'alert' }, `No link: ${describe(e)}`));
    }
  });
  return form;
}
