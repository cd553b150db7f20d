// The console's shell: sign-in, the navigation, and a hash router (#/users, #/users/<id>,
// #/audit, #/settings, #/health), so the browser's back button and links work with no server routes.
import { ApiError, call, describe, setToken, signedIn } from './api.ts';
import { clearToast, field, h, mount } from './dom.ts';
import { clientsView, providersView, ssoView } from './integrations.ts';
import { auditView, healthView, settingsView } from './views.ts';
import { userView, usersView } from './users.ts';

const root = document.getElementById('app')!;

const NAV: [string, string][] = [
  ['#/users', 'Users'],
  ['#/sso', 'SSO'],
  ['#/providers', 'Providers'],
  ['#/clients', 'OAuth clients'],
  ['#/audit', 'Audit log'],
  ['#/settings', 'Settings'],
  ['#/health', 'Health'],
];
/** Which features are on (GET /admin/config), read once per sign-in: their sections show only then. */
let features: Record<string, boolean> | undefined;
const FEATURE_OF: Record<string, string> = {
  '#/sso': 'SAML_ENABLED',
  '#/providers': 'CUSTOM_OAUTH_ENABLED',
  '#/clients': 'OAUTH_SERVER_ENABLED',
};
const shown = (href: string): boolean => !FEATURE_OF[href] || features?.[FEATURE_OF[href]!] === true;

async function loadFeatures(): Promise<void> {
  const { body } = await call<{ variables: { name: string; value: unknown }[] }>('GET', 'admin/config');
  features = {};
  for (const v of body.variables)
    if (Object.values(FEATURE_OF).includes(v.name)) features[v.name] = v.value === true || v.value === 'true';
}

function signInView(notice = ''): HTMLElement {
  const input = h('input', {
    type: 'password',
    name: 'token',
    id: 'token',
    autocomplete: 'off',
    required: true,
    spellcheck: 'false',
  });
  const error = h('p', { class: 'error', role: 'alert' }, notice);
  const form = h(
    'form',
    { class: 'card signin' },
    h('h1', null, 'authsvc console'),
    h(
      'p',
      null,
      "Sign in with the service-role key or an admin JWT (a role of JWT_ADMIN_ROLES). It is kept in this page's memory only: reloading the page signs you out.",
    ),
    field('Service-role key or admin JWT', input),
    error,
    h('div', { class: 'row' }, h('button', { type: 'submit', class: 'primary' }, 'Sign in')),
  );
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    error.textContent = '';
    setToken(input.value.trim());
    try {
      await call('GET', 'admin/users?per_page=1');
      input.value = '';
      if (!location.hash || location.hash === '#/' || location.hash === '#/signin') location.hash = '#/users';
      else void route();
    } catch (e) {
      setToken(undefined);
      error.textContent =
        e instanceof ApiError && (e.status === 401 || e.status === 403)
          ? `This token is not accepted for the admin API: ${describe(e)}`
          : `Sign-in failed: ${describe(e)}`;
    }
  });
  queueMicrotask(() => input.focus());
  return h('main', { class: 'center' }, form);
}

function shell(current: string, content: HTMLElement): HTMLElement {
  const signOut = h(
    'button',
    {
      type: 'button',
      class: 'link',
      onclick: () => {
        setToken(undefined);
        features = undefined;
        location.hash = '#/signin';
        void route();
      },
    },
    'Sign out',
  );
  return h(
    'div',
    { class: 'shell' },
    h(
      'header',
      null,
      h('a', { class: 'brand', href: '#/users' }, 'authsvc'),
      h(
        'nav',
        { 'aria-label': 'Sections' },
        NAV.filter(([href]) => shown(href)).map(([href, label]) =>
          h('a', { href, 'aria-current': current === href ? 'page' : null }, label),
        ),
      ),
      signOut,
    ),
    h('main', { id: 'main', tabindex: '-1' }, content),
  );
}

let lastSection = '';

async function route(): Promise<void> {
  if (!signedIn()) {
    lastSection = '';
    mount(root, signInView());
    document.title = 'Sign in · authsvc console';
    return;
  }
  const hash = location.hash || '#/users';
  const [, section = 'users', id] = hash.split('/');
  if (!features) {
    try {
      await loadFeatures();
    } catch {
      features = {};
    }
  }
  const content = h('div', { class: 'loading' }, 'Loading…');
  const current = `#/${section}`;
  if (section !== lastSection) clearToast();
  lastSection = section;
  mount(root, shell(current, content));
  const views: Record<string, () => Promise<HTMLElement>> = {
    users: () => (id ? userView(decodeURIComponent(id)) : usersView()),
    audit: () => auditView(id ? decodeURIComponent(id) : undefined),
    sso: () => ssoView(id ? decodeURIComponent(id) : undefined),
    providers: () => providersView(id ? decodeURIComponent(id) : undefined),
    clients: () => clientsView(id ? decodeURIComponent(id) : undefined),
    settings: settingsView,
    health: healthView,
  };
  const view = views[section] ?? usersView;
  try {
    const el = await view();
    content.replaceWith(el);
  } catch (e) {
    // An expired or revoked token: back to the sign-in form.
    if (e instanceof ApiError && e.status === 401) {
      setToken(undefined);
      features = undefined;
      mount(root, signInView('Your token is no longer accepted (expired?): sign in again.'));
      return;
    }
    content.replaceWith(h('p', { class: 'error', role: 'alert' }, describe(e)));
  }
  const title = NAV.find(([href]) => href === current)?.[1] ?? 'Users';
  document.title = `${title} · authsvc console`;
}

window.addEventListener('hashchange', () => void route());
void route();
