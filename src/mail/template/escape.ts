// html/template's contextual escaping for email bodies: the HTML around each action decides how
// its value is escaped, as Go decides it before the first execution. Text and RCDATA (<title>,
// <textarea>): HTML-escaped. Attribute values: HTML-escaped for their quoting; URL attributes
// (href, src, action, … and names with src/uri/url) first filtered (a scheme other than http,
// https or mailto becomes "#ZgotmplZ"), then normalised or, after `?` or `#`, percent-encoded.
// Attribute names: only [a-z0-9], else ZgotmplZ. Comments are dropped, with any action in them.
// Scripts, styles, on* and style attributes: every action writes ZgotmplZ (Go escapes for
// JavaScript and CSS there; email clients strip both: a deliberate difference). Branches that end
// in different contexts, and a template that ends inside a tag, fail as Go fails them.
import type { Node, Pipeline } from './parse.ts';
import { TemplateExecError } from './values.ts';

type State = 'text' | 'tag' | 'attrName' | 'afterName' | 'beforeValue' | 'attr' | 'comment' | 'rcdata' | 'raw';
type AttrType = 'plain' | 'url' | 'js' | 'css';

interface Ctx {
  state: State;
  delim: '' | '"' | "'" | ' ';
  attr: AttrType;
  urlPart: 'none' | 'pre' | 'query' | 'unknown';
  /** The element whose content is special (script, style, textarea, title), while inside it or its open tag. */
  element: string;
}

const START: Ctx = { state: 'text', delim: '', attr: 'plain', urlPart: 'none', element: '' };
const SPECIAL = new Set(['script', 'style', 'textarea', 'title']);
const URL_ATTRS = new Set([
  'action',
  'archive',
  'background',
  'cite',
  'classid',
  'codebase',
  'data',
  'formaction',
  'href',
  'icon',
  'longdesc',
  'manifest',
  'poster',
  'profile',
  'src',
  'srcset',
  'usemap',
  'xmlns',
]);
const FAILSAFE = 'ZgotmplZ';

/** html/template's attrType: what an attribute's value holds. */
function attrType(raw: string): AttrType {
  let name = raw.toLowerCase();
  if (name.startsWith('data-')) name = name.slice(5);
  else if (name.includes(':')) {
    const [prefix, local = ''] = name.split(':', 2);
    if (prefix === 'xmlns') return 'url';
    name = local;
  }
  if (URL_ATTRS.has(name)) return 'url';
  if (name === 'style') return 'css';
  if (name.startsWith('on')) return 'js';
  if (name.includes('src') || name.includes('uri') || name.includes('url')) return 'url';
  return 'plain';
}

const eqCtx = (a: Ctx, b: Ctx) =>
  a.state === b.state && a.delim === b.delim && a.attr === b.attr && a.urlPart === b.urlPart && a.element === b.element;

function join(a: Ctx, b: Ctx, what: string): Ctx {
  if (eqCtx(a, b)) return a;
  if (eqCtx({ ...a, urlPart: b.urlPart }, b)) return { ...a, urlPart: 'unknown' };
  throw new TemplateExecError(`{{${what}}} branches end in different contexts`);
}

const NAME_CHAR = /[^\s/>=]/;

/** Moves the context over literal template text; returns the text as written (comments dropped). */
function advance(start: Ctx, text: string): { ctx: Ctx; out: string } {
  const c: Ctx = { ...start };
  let out = '';
  let i = 0;
  const endTag = () => {
    c.state = c.element === 'script' || c.element === 'style' ? 'raw' : c.element ? 'rcdata' : 'text';
    c.attr = 'plain';
    c.delim = '';
  };
  while (i < text.length) {
    const ch = text[i]!;
    switch (c.state) {
      case 'comment': {
        const end = text.indexOf('-->', i);
        if (end < 0) return { ctx: c, out };
        i = end + 3;
        c.state = 'text';
        continue;
      }
      case 'text':
        if (text.startsWith('<!--', i)) {
          c.state = 'comment';
          i += 4;
          continue;
        }
        if (ch === '<' && /[A-Za-z/]/.test(text[i + 1] ?? '')) {
          const m = /^<(\/?)([A-Za-z][A-Za-z0-9:-]*)/.exec(text.slice(i));
          if (m) {
            const name = m[2]!.toLowerCase();
            c.element = !m[1] && SPECIAL.has(name) ? name : '';
            c.state = 'tag';
            out += m[0];
            i += m[0].length;
            continue;
          }
        }
        break;
      case 'rcdata':
      case 'raw': {
        const re = new RegExp(`</${c.element}(?=[\\s/>])`, 'i');
        const m = re.exec(text.slice(i));
        if (!m) return { ctx: c, out: out + text.slice(i) };
        out += text.slice(i, i + m.index + m[0].length);
        i += m.index + m[0].length;
        c.element = '';
        c.state = 'tag';
        continue;
      }
      case 'tag':
      case 'afterName':
        if (/\s/.test(ch) || ch === '/') break;
        if (ch === '>') {
          out += ch;
          i++;
          endTag();
          continue;
        }
        if (ch === '=' && c.state === 'afterName') {
          c.state = 'beforeValue';
          break;
        }
        c.state = 'attrName';
        c.attr = 'plain';
        continue;
      case 'attrName': {
        let j = i;
        while (j < text.length && NAME_CHAR.test(text[j]!)) j++;
        if (j === i) {
          // The name (written by an action) ends here; anything else where a name belongs is kept as written.
          if (!/[\s/>=]/.test(ch)) {
            out += ch;
            i++;
          }
          c.state = 'afterName';
          continue;
        }
        c.attr = attrType(text.slice(i, j));
        out += text.slice(i, j);
        i = j;
        if (i < text.length) c.state = 'afterName';
        continue;
      }
      case 'beforeValue':
        if (/\s/.test(ch)) break;
        if (ch === '>') {
          out += ch;
          i++;
          endTag();
          continue;
        }
        c.state = 'attr';
        c.urlPart = 'none';
        if (ch === '"' || ch === "'") {
          c.delim = ch;
          break;
        }
        c.delim = ' ';
        continue;
      case 'attr': {
        const ends = c.delim === ' ' ? /\s/.test(ch) || ch === '>' : ch === c.delim;
        if (ends) {
          c.state = 'tag';
          c.delim = '';
          c.urlPart = 'none';
          if (ch === '>') continue;
          break;
        }
        if (c.attr === 'url') c.urlPart = ch === '?' || ch === '#' ? 'query' : c.urlPart === 'none' ? 'pre' : c.urlPart;
        break;
      }
    }
    out += ch;
    i++;
  }
  return { ctx: c, out };
}

/** The escapers of an action in context `c`, and the context after it. */
function escapersFor(c: Ctx): { escapers: string[]; after: Ctx } {
  switch (c.state) {
    case 'text':
    case 'rcdata':
      return { escapers: ['html'], after: c };
    case 'comment':
      return { escapers: ['comment'], after: c };
    case 'raw':
      return { escapers: ['unsupported'], after: c };
    case 'tag':
    case 'afterName':
    case 'attrName':
      return { escapers: ['name'], after: { ...c, state: 'attrName', attr: 'plain' } };
    case 'beforeValue':
      return escapersFor({ ...c, state: 'attr', delim: ' ', urlPart: 'none' });
    case 'attr': {
      const quote = c.delim === ' ' ? 'nospace' : 'attr';
      if (c.attr === 'js' || c.attr === 'css') return { escapers: ['unsupported'], after: c };
      if (c.attr === 'plain') return { escapers: [quote], after: c };
      if (c.urlPart === 'unknown')
        throw new TemplateExecError('an action appears in an ambiguous context within a URL');
      const url =
        c.urlPart === 'none' ? ['urlFilter', 'urlNormalize'] : c.urlPart === 'pre' ? ['urlNormalize'] : ['urlEscape'];
      return { escapers: [...url, quote], after: c };
    }
  }
}

// A pipeline that ends in `html` or `urlquery` already escapes as the context's escaper would:
// html/template drops that escaper rather than escape twice (its equivEscapers).
const EQUIVALENT: Record<string, string[]> = { html: ['html', 'attr'], urlquery: ['urlEscape', 'urlNormalize'] };

function withoutEquivalent(pipe: Pipeline, escapers: string[]): string[] {
  const last = pipe.cmds[pipe.cmds.length - 1]?.args[0];
  if (last?.t !== 'func' || !EQUIVALENT[last.name]) return escapers;
  const i = escapers.findIndex((e) => EQUIVALENT[last.name]!.includes(e));
  return i < 0 ? escapers : escapers.filter((_, j) => j !== i);
}

function escapeList(nodes: Node[], start: Ctx): { nodes: Node[]; ctx: Ctx } {
  let c = start;
  const out: Node[] = [];
  for (const node of nodes) {
    switch (node.t) {
      case 'text': {
        const r = advance(c, node.text);
        c = r.ctx;
        if (r.out) out.push({ t: 'text', text: r.out });
        break;
      }
      case 'action': {
        if (node.pipe.decl.length > 0) {
          out.push(node);
          break;
        }
        const { escapers, after } = escapersFor(c);
        out.push({ ...node, escapers: withoutEquivalent(node.pipe, escapers) });
        c = after;
        break;
      }
      case 'if':
      case 'with':
      case 'range': {
        const body = escapeList(node.list, c);
        if (node.t === 'range' && !eqCtx(join(body.ctx, c, 'range'), c))
          throw new TemplateExecError('on range loop re-entry: {{range}} branches end in different contexts');
        const alt = node.elseList ? escapeList(node.elseList, c) : { nodes: undefined, ctx: c };
        c = join(body.ctx, alt.ctx, node.t);
        out.push({ ...node, list: body.nodes, elseList: alt.nodes });
        break;
      }
      default:
        out.push(node);
    }
  }
  return { nodes: out, ctx: c };
}

/** The template with its comments dropped and an escaper chain on each action (html/template's escape pass). */
export function escapeHtmlTemplate(nodes: Node[]): Node[] {
  const { nodes: out, ctx } = escapeList(nodes, START);
  if (ctx.state !== 'text') throw new TemplateExecError(`template ends in a non-text context: ${ctx.state}`);
  return out;
}

const HTML_TABLE: Record<string, string> = {
  '\0': '\uFFFD',
  '"': '&#34;',
  '&': '&amp;',
  "'": '&#39;',
  '+': '&#43;',
  '<': '&lt;',
  '>': '&gt;',
};
const NOSPACE_TABLE: Record<string, string> = {
  ...HTML_TABLE,
  '\t': '&#9;',
  '\n': '&#10;',
  '\v': '&#11;',
  '\f': '&#12;',
  '\r': '&#13;',
  ' ': '&#32;',
  '=': '&#61;',
  '`': '&#96;',
};

/** Go's template.HTMLEscapeString (the `html` function). */
export function htmlEscape(s: string): string {
  return s.replace(/[\0"&'<>]/g, (c) => HTML_TABLE[c]!);
}

/** Go's template.JSEscapeString (the `js` function). */
export function jsEscape(s: string): string {
  return s.replace(/[\\'"<>&=\u0000-\u001f\u007f\u2028\u2029]/g, (c) => {
    if (c === '\\' || c === "'" || c === '"') return `\\${c}`;
    return `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
  });
}

const utf8 = new TextEncoder();

/** Percent-encodes each UTF-8 byte outside the allowed set (lowercase hex, as html/template writes it). */
function processUrl(s: string, normalize: boolean): string {
  let out = '';
  const bytes = utf8.encode(s);
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    const c = String.fromCharCode(b);
    const unreserved = /[A-Za-z0-9\-._~]/.test(c);
    const reserved = normalize && /[!#$&*+,/:;=?@[\]]/.test(c);
    const validEscape =
      normalize &&
      c === '%' &&
      /[0-9A-Fa-f]/.test(String.fromCharCode(bytes[i + 1] ?? 0)) &&
      /[0-9A-Fa-f]/.test(String.fromCharCode(bytes[i + 2] ?? 0));
    out += unreserved || reserved || validEscape ? c : `%${b.toString(16).padStart(2, '0')}`;
  }
  return out;
}

/** Go's url.QueryEscape (the `urlquery` function). */
export function queryEscape(s: string): string {
  let out = '';
  for (const b of utf8.encode(s)) {
    const c = String.fromCharCode(b);
    out += c === ' ' ? '+' : /[A-Za-z0-9\-._~]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** html/template's isSafeURL: no scheme, or http, https, mailto. */
function safeUrl(s: string): boolean {
  const colon = s.indexOf(':');
  if (colon < 0) return true;
  const scheme = s.slice(0, colon);
  return scheme.includes('/') || ['http', 'https', 'mailto'].includes(scheme.toLowerCase());
}

/** html/template's htmlEscaper: Go's HTMLEscapeString plus `+` (it could open a UTF-7 sequence). */
const htmlEscaper = (s: string): string => s.replace(/[\0"&'+<>]/g, (c) => HTML_TABLE[c]!);

export const ESCAPERS: Record<string, (s: string) => string> = {
  html: htmlEscaper,
  // A quoted attribute value takes the same escapes as text (html/template's attrEscaper).
  attr: htmlEscaper,
  nospace: (s) => (s === '' ? FAILSAFE : s.replace(/[\0"&'+<>\t\n\v\f\r =`]/g, (c) => NOSPACE_TABLE[c]!)),
  name: (s) => {
    const lower = s.toLowerCase();
    return lower !== '' && attrType(lower) === 'plain' && /^[a-z0-9]+$/.test(lower) ? lower : FAILSAFE;
  },
  urlFilter: (s) => (safeUrl(s) ? s : `#${FAILSAFE}`),
  urlNormalize: (s) => processUrl(s, true),
  urlEscape: (s) => processUrl(s, false),
  comment: () => '',
  unsupported: () => FAILSAFE,
};
