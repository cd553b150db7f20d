// The console's whole rendering layer: elements are built with createElement, and every string
// becomes a text node or an attribute value (never parsed as HTML), so user-controlled values
// (metadata, emails, audit payloads) render as text whatever they hold.
export type Child = Node | string | number | null | undefined | false | Child[];
type AttrValue = string | number | boolean | null | undefined | ((ev: Event) => void);

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Record<string, AttrValue> | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (name === 'value' && 'value' in el) (el as HTMLInputElement).value = String(value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

export function append(parent: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(parent, c);
    else parent.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
  }
}

/** Replaces the children of `parent`. */
export function mount(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** A date as the browser's locale shows it, or an em dash. */
export function when(iso: unknown): string {
  if (typeof iso !== 'string' || iso === '') return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/** JSON of a value, indented; shown in a <pre> as text. */
export const pretty = (v: unknown): string => JSON.stringify(v ?? {}, null, 2);

/** A labelled field: <label>text <input></label>. */
export function field(label: string, control: HTMLElement, hint?: string): HTMLLabelElement {
  return h('label', { class: 'field' }, h('span', null, label), control, hint ? h('small', null, hint) : null);
}

/** A modal confirmation (<dialog>: Esc cancels, focus stays inside). Resolves true when confirmed. */
export function confirmDialog(title: string, message: string, action: string, danger = true): Promise<boolean> {
  return new Promise((resolve) => {
    const dialog = h(
      'dialog',
      { class: 'confirm', 'aria-labelledby': 'confirm-title' },
      h(
        'form',
        { method: 'dialog' },
        h('h2', { id: 'confirm-title' }, title),
        h('p', null, message),
        h(
          'div',
          { class: 'row end' },
          h('button', { value: 'cancel', type: 'submit' }, 'Cancel'),
          h('button', { value: 'ok', type: 'submit', class: danger ? 'danger' : 'primary' }, action),
        ),
      ),
    );
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(dialog.returnValue === 'ok');
    });
    document.body.appendChild(dialog);
    dialog.showModal();
    (dialog.querySelector('button[value="cancel"]') as HTMLButtonElement).focus();
  });
}

let toastTimer: ReturnType<typeof setTimeout> | undefined;
/** Removes the status line (on going to another section). */
export function clearToast(): void {
  const el = document.getElementById('toast');
  if (el) {
    el.textContent = '';
    el.className = '';
  }
}

/** A status line at the bottom of the screen (role=status: read out by screen readers). */
export function toast(text: string, kind: 'ok' | 'error' = 'ok'): void {
  let el = document.getElementById('toast');
  if (!el) {
    el = h('div', { id: 'toast', role: 'status' });
    document.body.appendChild(el);
  }
  el.className = kind;
  el.textContent = text;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => {
    el.textContent = '';
    el.className = '';
  }, 8000);
}

/**
 * Submits `form` at most once at a time: the browser's validation first (required fields, email
 * and tel patterns, custom validity), then `run` with the submit buttons disabled, so a double
 * click sends one request.
 */
export function onSubmitOnce(form: HTMLFormElement, run: () => Promise<void>): void {
  let busy = false;
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (busy || !form.reportValidity()) return;
    busy = true;
    const buttons = [...form.querySelectorAll('button')] as HTMLButtonElement[];
    for (const b of buttons) b.disabled = true;
    try {
      await run();
    } finally {
      busy = false;
      for (const b of buttons) b.disabled = false;
    }
  });
}

/** A textarea whose content must be a JSON object (or empty): the browser refuses the form otherwise. */
export function jsonField(
  name: string,
  value: unknown,
  label: string,
): { control: HTMLTextAreaElement; read(): unknown } {
  const control = h('textarea', {
    name,
    rows: 4,
    spellcheck: 'false',
    value: value === undefined ? '' : JSON.stringify(value, null, 2),
  });
  const parse = (): unknown => {
    const text = control.value.trim();
    if (!text) return undefined;
    const v: unknown = JSON.parse(text);
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('not an object');
    return v;
  };
  control.addEventListener('input', () => {
    try {
      parse();
      control.setCustomValidity('');
    } catch {
      control.setCustomValidity(`${label} must be a JSON object, e.g. {"name": "Ada"}.`);
    }
  });
  return { control, read: parse };
}

/** E.164, as the admin API takes phone numbers (the + may be left out). */
export const PHONE_PATTERN = '\\+?[1-9][0-9]{6,14}';
export const PHONE_TITLE = 'An E.164 number: country code and number, up to 15 digits, e.g. +14155550123';
