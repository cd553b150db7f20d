// SSO providers (SAML), custom OAuth/OIDC providers and the OAuth server's clients: list, add,
// view, edit, delete, each through its admin API endpoint. A client secret is shown once, when it
// is made, and is kept nowhere.
import { call, describe } from './api.ts';
import { confirmDialog, field, h, jsonField, mount, onSubmitOnce, pretty, toast, when } from './dom.ts';
import { dl, rerender, table } from './users.ts';

type Json = Record<string, unknown>;
const str = (v: unknown): string => (typeof v === 'string' && v !== '' ? v : '—');
const list = (text: string): string[] =>
  text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);

/** A form that reports the API's refusal inside itself and runs `run` once per submit. */
function apiForm(id: string, title: string, fields: HTMLElement[], submit: string, run: () => Promise<void>) {
  const error = h('p', { class: 'error', role: 'alert' });
  const form = h(
    'form',
    { class: 'card', id, 'aria-labelledby': `${id}-title` },
    h('h2', { id: `${id}-title` }, title),
    fields,
    error,
    h('button', { type: 'submit', class: 'primary' }, submit),
  );
  onSubmitOnce(form, async () => {
    error.textContent = '';
    try {
      await run();
    } catch (e) {
      error.textContent = describe(e);
    }
  });
  return form;
}

function deleteButton(what: string, path: string, back: string): HTMLElement {
  return h(
    'button',
    {
      type: 'button',
      class: 'danger',
      onclick: async () => {
        if (!(await confirmDialog(`Delete ${what}?`, `${what} is removed for good.`, 'Delete'))) return;
        try {
          await call('DELETE', path);
          toast(`${what} deleted.`);
          location.hash = back;
        } catch (e) {
          toast(`Delete failed: ${describe(e)}`, 'error');
        }
      },
    },
    'Delete',
  );
}

/** A secret shown once, in a read-only field the operator copies from. */
function secretOnce(label: string, secret: string): HTMLElement {
  return h(
    'div',
    { class: 'card', id: 'secret-once', role: 'region', 'aria-label': label },
    h('h2', null, label),
    h('p', { class: 'muted' }, 'Shown this once: it cannot be read back. Copy it now.'),
    h('input', { type: 'text', readonly: true, value: secret, 'aria-label': label, class: 'mono' }),
  );
}

// ---------------------------------------------------------------- SSO (SAML)

export async function ssoView(id?: string): Promise<HTMLElement> {
  if (id) return ssoProviderView(id);
  const { body } = await call<{ items?: Json[] }>('GET', 'admin/sso/providers');
  const items = body.items ?? [];
  const xml = h('textarea', { name: 'metadata_xml', rows: 4, spellcheck: 'false' });
  const url = h('input', { type: 'url', name: 'metadata_url', placeholder: 'https://idp.example.com/metadata' });
  const domains = h('input', { type: 'text', name: 'domains', placeholder: 'example.com, example.org' });
  const mapping = jsonField('attribute_mapping', undefined, 'Attribute mapping');
  const needOne = () =>
    xml.setCustomValidity(xml.value.trim() || url.value.trim() ? '' : 'Paste the metadata XML or give its URL.');
  xml.addEventListener('input', needOne);
  url.addEventListener('input', needOne);
  needOne();
  const add = apiForm(
    'add-sso',
    'Add a SAML identity provider',
    [
      field('Metadata XML', xml),
      field('or metadata URL', url),
      field('Domains', domains, 'Comma-separated: the addresses this provider vouches for.'),
      field(
        'Attribute mapping (JSON, optional)',
        mapping.control,
        'GoTrue\'s shape: {"keys": {"name": {"name": "displayName"}}}',
      ),
    ],
    'Add provider',
    async () => {
      const body: Json = { type: 'saml', domains: list(domains.value) };
      if (xml.value.trim()) body.metadata_xml = xml.value.trim();
      else body.metadata_url = url.value.trim();
      const m = mapping.read();
      if (m) body.attribute_mapping = m;
      const { body: created } = await call<Json>('POST', 'admin/sso/providers', body);
      toast('Provider added.');
      location.hash = `#/sso/${encodeURIComponent(String(created.id))}`;
    },
  );
  return h(
    'section',
    { 'aria-labelledby': 'sso-title' },
    h('h1', { id: 'sso-title' }, 'SSO providers'),
    h(
      'div',
      { class: 'card' },
      table(['Entity ID', 'Domains', 'Created'], items, (r, c) =>
        c === 'Entity ID'
          ? h(
              'a',
              { href: `#/sso/${encodeURIComponent(String(r.id))}` },
              str((r.saml as Json | undefined)?.entity_id ?? r.id),
            )
          : c === 'Domains'
            ? ((r.domains as Json[] | undefined) ?? []).map((d) => d.domain).join(', ') || '—'
            : when(r.created_at),
      ),
    ),
    add,
  );
}

async function ssoProviderView(id: string): Promise<HTMLElement> {
  const path = `admin/sso/providers/${encodeURIComponent(id)}`;
  const { body: p } = await call<Json>('GET', path);
  const saml = (p.saml ?? {}) as Json;
  const current = ((p.domains as Json[] | undefined) ?? []).map((d) => String(d.domain));
  const domains = h('input', { type: 'text', name: 'domains', value: current.join(', ') });
  const mapping = jsonField('attribute_mapping', saml.attribute_mapping ?? {}, 'Attribute mapping');
  const edit = apiForm(
    'edit-sso',
    'Edit',
    [field('Domains', domains, 'Comma-separated.'), field('Attribute mapping (JSON)', mapping.control)],
    'Save changes',
    async () => {
      await call('PUT', path, { domains: list(domains.value), attribute_mapping: mapping.read() ?? {} });
      toast('Saved.');
      rerender();
    },
  );
  return h(
    'section',
    { 'aria-labelledby': 'sso-provider-title' },
    h('p', null, h('a', { href: '#/sso' }, '← SSO providers')),
    h(
      'div',
      { class: 'row between' },
      h('h1', { id: 'sso-provider-title' }, str(saml.entity_id)),
      deleteButton('This provider', path, '#/sso'),
    ),
    h(
      'div',
      { class: 'grid2' },
      h(
        'div',
        { class: 'card' },
        h('h2', null, 'Provider'),
        dl([
          ['ID', p.id],
          ['Entity ID', saml.entity_id],
          ['Metadata URL', saml.metadata_url],
          ['Domains', current.join(', ')],
          ['Created', when(p.created_at)],
          ['Updated', when(p.updated_at)],
        ]),
      ),
      edit,
    ),
    h('div', { class: 'card' }, h('h2', null, 'Metadata XML'), h('pre', { class: 'json' }, str(saml.metadata_xml))),
  );
}

// ---------------------------------------------------------------- custom OAuth / OIDC providers

export async function providersView(identifier?: string): Promise<HTMLElement> {
  if (identifier) return providerView(identifier);
  const { body } = await call<{ providers?: Json[] }>('GET', 'admin/custom-providers');
  const rows = body.providers ?? [];
  const type = h(
    'select',
    { name: 'provider_type', 'aria-label': 'Provider type' },
    h('option', { value: 'oidc' }, 'OpenID Connect (discovery)'),
    h('option', { value: 'oauth2' }, 'OAuth 2 (endpoints)'),
  );
  const id = h('input', {
    type: 'text',
    name: 'identifier',
    required: true,
    pattern: 'custom:[a-z0-9_-]+',
    placeholder: 'custom:acme',
    title: 'custom: and a name of a-z, 0-9, - or _',
  });
  const name = h('input', { type: 'text', name: 'name', required: true });
  const clientId = h('input', { type: 'text', name: 'client_id', required: true, autocomplete: 'off' });
  const secret = h('input', { type: 'password', name: 'client_secret', autocomplete: 'new-password' });
  const scopes = h('input', { type: 'text', name: 'scopes', placeholder: 'openid email profile' });
  const issuer = h('input', { type: 'url', name: 'issuer', placeholder: 'https://id.example.com' });
  const authUrl = h('input', { type: 'url', name: 'authorization_url' });
  const tokenUrl = h('input', { type: 'url', name: 'token_url' });
  const userinfoUrl = h('input', { type: 'url', name: 'userinfo_url' });
  const oidc = h(
    'div',
    null,
    field('Issuer', issuer, 'Its discovery document is read from /.well-known/openid-configuration.'),
  );
  const oauth2 = h(
    'div',
    { hidden: true },
    field('Authorization URL', authUrl),
    field('Token URL', tokenUrl),
    field('Userinfo URL', userinfoUrl),
  );
  const sync = () => {
    const isOidc = type.value === 'oidc';
    oidc.hidden = !isOidc;
    oauth2.hidden = isOidc;
    issuer.required = isOidc;
    for (const u of [authUrl, tokenUrl, userinfoUrl]) u.required = !isOidc;
  };
  type.addEventListener('change', sync);
  sync();
  const add = apiForm(
    'add-provider',
    'Add a provider',
    [
      field('Type', type),
      field('Identifier', id),
      field('Name', name),
      field('Client ID', clientId),
      field('Client secret', secret),
      field('Scopes', scopes, 'Space- or comma-separated.'),
      oidc,
      oauth2,
    ],
    'Add provider',
    async () => {
      const body: Json = {
        provider_type: type.value,
        identifier: id.value.trim(),
        name: name.value.trim(),
        client_id: clientId.value.trim(),
      };
      if (secret.value) body.client_secret = secret.value;
      if (scopes.value.trim()) body.scopes = list(scopes.value);
      if (type.value === 'oidc') body.issuer = issuer.value.trim();
      else
        Object.assign(body, {
          authorization_url: authUrl.value.trim(),
          token_url: tokenUrl.value.trim(),
          userinfo_url: userinfoUrl.value.trim(),
        });
      await call('POST', 'admin/custom-providers', body);
      toast(`${body.identifier} added.`);
      location.hash = `#/providers/${encodeURIComponent(String(body.identifier))}`;
    },
  );
  return h(
    'section',
    { 'aria-labelledby': 'providers-title' },
    h('h1', { id: 'providers-title' }, 'Custom OAuth and OIDC providers'),
    h(
      'div',
      { class: 'card' },
      table(['Identifier', 'Name', 'Type', 'Enabled'], rows, (r, c) =>
        c === 'Identifier'
          ? h('a', { href: `#/providers/${encodeURIComponent(String(r.identifier))}` }, str(r.identifier))
          : c === 'Name'
            ? str(r.name)
            : c === 'Type'
              ? str(r.provider_type)
              : r.enabled === false
                ? 'no'
                : 'yes',
      ),
    ),
    add,
  );
}

async function providerView(identifier: string): Promise<HTMLElement> {
  const path = `admin/custom-providers/${encodeURIComponent(identifier)}`;
  const { body: p } = await call<Json>('GET', path);
  const name = h('input', {
    type: 'text',
    name: 'name',
    value: str(p.name) === '—' ? '' : String(p.name),
    required: true,
  });
  const clientId = h('input', { type: 'text', name: 'client_id', value: String(p.client_id ?? ''), required: true });
  const secret = h('input', {
    type: 'password',
    name: 'client_secret',
    autocomplete: 'new-password',
    placeholder: 'unchanged',
  });
  const scopes = h('input', {
    type: 'text',
    name: 'scopes',
    value: ((p.scopes as string[] | undefined) ?? []).join(' '),
  });
  const enabled = h('input', { type: 'checkbox', name: 'enabled', checked: p.enabled !== false });
  const edit = apiForm(
    'edit-provider',
    'Edit',
    [
      field('Name', name),
      field('Client ID', clientId),
      field('Client secret', secret, 'Left empty, the stored secret stays.'),
      field('Scopes', scopes),
      h('label', { class: 'check' }, enabled, ' Enabled'),
    ],
    'Save changes',
    async () => {
      const body: Json = {
        name: name.value.trim(),
        client_id: clientId.value.trim(),
        scopes: list(scopes.value),
        enabled: enabled.checked,
      };
      if (secret.value) body.client_secret = secret.value;
      await call('PUT', path, body);
      toast('Saved.');
      rerender();
    },
  );
  const shown = { ...p };
  delete shown.client_secret;
  return h(
    'section',
    { 'aria-labelledby': 'provider-title' },
    h('p', null, h('a', { href: '#/providers' }, '← Custom providers')),
    h(
      'div',
      { class: 'row between' },
      h('h1', { id: 'provider-title' }, str(p.identifier)),
      deleteButton(str(p.identifier), path, '#/providers'),
    ),
    h(
      'div',
      { class: 'grid2' },
      h('div', { class: 'card' }, h('h2', null, 'Provider'), h('pre', { class: 'json' }, pretty(shown))),
      edit,
    ),
  );
}

// ---------------------------------------------------------------- OAuth server clients

const GRANTS = ['authorization_code', 'refresh_token'];

export async function clientsView(id?: string): Promise<HTMLElement> {
  if (id) return clientView(id);
  const { body } = await call<{ clients?: Json[] }>('GET', 'admin/oauth/clients');
  const clients = body.clients ?? [];
  const name = h('input', { type: 'text', name: 'client_name', required: true });
  const kind = h(
    'select',
    { name: 'client_type', 'aria-label': 'Client type' },
    h('option', { value: 'confidential' }, 'Confidential (has a secret)'),
    h('option', { value: 'public' }, 'Public (PKCE, no secret)'),
  );
  const redirects = h('textarea', {
    name: 'redirect_uris',
    rows: 3,
    required: true,
    spellcheck: 'false',
    placeholder: 'https://app.example.com/callback',
  });
  const grants = GRANTS.map((g) => h('input', { type: 'checkbox', name: 'grant_types', value: g, checked: true }));
  const out = h('div');
  const add = apiForm(
    'add-client',
    'Register a client',
    [
      field('Name', name),
      field('Type', kind),
      field('Redirect URIs', redirects, 'One per line.'),
      h(
        'fieldset',
        null,
        h('legend', null, 'Grant types'),
        grants.map((g) => h('label', { class: 'check' }, g, ` ${g.value}`)),
      ),
      out,
    ],
    'Register',
    async () => {
      const { body: c } = await call<Json>('POST', 'admin/oauth/clients', {
        client_name: name.value.trim(),
        client_type: kind.value,
        redirect_uris: list(redirects.value),
        grant_types: grants.filter((g) => g.checked).map((g) => g.value),
      });
      toast(`${str(c.client_name)} registered.`);
      mount(
        out,
        h('p', null, 'Client ID: ', h('code', { id: 'new-client-id' }, String(c.client_id))),
        c.client_secret ? secretOnce('Client secret', String(c.client_secret)) : null,
        h('p', null, h('a', { href: `#/clients/${encodeURIComponent(String(c.client_id))}` }, 'Open the client')),
      );
    },
  );
  return h(
    'section',
    { 'aria-labelledby': 'clients-title' },
    h('h1', { id: 'clients-title' }, 'OAuth clients'),
    h(
      'div',
      { class: 'card' },
      table(['Name', 'Client ID', 'Type', 'Redirect URIs'], clients, (r, c) =>
        c === 'Name'
          ? h('a', { href: `#/clients/${encodeURIComponent(String(r.client_id))}` }, str(r.client_name))
          : c === 'Client ID'
            ? h('code', null, str(r.client_id))
            : c === 'Type'
              ? str(r.client_type)
              : ((r.redirect_uris as string[] | undefined) ?? []).join(' '),
      ),
    ),
    add,
  );
}

async function clientView(id: string): Promise<HTMLElement> {
  const path = `admin/oauth/clients/${encodeURIComponent(id)}`;
  const { body: c } = await call<Json>('GET', path);
  const out = h('div');
  const regenerate = h(
    'button',
    {
      type: 'button',
      onclick: async () => {
        if (!(await confirmDialog('Regenerate the secret?', 'The current secret stops working at once.', 'Regenerate')))
          return;
        try {
          const { body } = await call<Json>('POST', `${path}/regenerate_secret`);
          out.replaceChildren(secretOnce('New client secret', String(body.client_secret ?? '')));
          toast('A new secret is made; the old one no longer works.');
        } catch (e) {
          toast(`Regenerating failed: ${describe(e)}`, 'error');
        }
      },
    },
    'Regenerate secret',
  );
  return h(
    'section',
    { 'aria-labelledby': 'client-title' },
    h('p', null, h('a', { href: '#/clients' }, '← OAuth clients')),
    h(
      'div',
      { class: 'row between' },
      h('h1', { id: 'client-title' }, str(c.client_name)),
      h(
        'div',
        { class: 'actions' },
        c.client_type === 'confidential' ? regenerate : null,
        deleteButton(str(c.client_name), path, '#/clients'),
      ),
    ),
    out,
    h(
      'div',
      { class: 'card' },
      dl([
        ['Client ID', c.client_id],
        ['Type', c.client_type],
        ['Token endpoint auth', c.token_endpoint_auth_method],
        ['Grant types', ((c.grant_types as string[] | undefined) ?? []).join(', ')],
        ['Redirect URIs', ((c.redirect_uris as string[] | undefined) ?? []).join(' ')],
        ['Registration', c.registration_type],
        ['Created', when(c.created_at)],
      ]),
    ),
  );
}
