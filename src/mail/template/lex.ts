// The lexer of one action's body: fields (`.a`), variables (`$x`), identifiers, string, raw
// string and number literals, `(` `)` `|` `:=` `=` `,`; whether a space came before each token
// (it separates a command's operands, and `.b` right after a term chains a field).
import { TemplateSyntaxError } from './syntax-error.ts';

export type Tok =
  | { k: 'field'; v: string; space: boolean }
  | { k: 'var'; v: string; space: boolean }
  | { k: 'ident'; v: string; space: boolean }
  | { k: 'string'; v: string; space: boolean }
  | { k: 'number'; v: string; space: boolean }
  | { k: 'dot' | '(' | ')' | '|' | ':=' | '=' | ','; v: string; space: boolean };

export const SPACE = /[ \t\r\n]/;
const IDENT = /[A-Za-z0-9_]/;

function unquote(raw: string): string {
  let out = '';
  for (let i = 1; i < raw.length - 1; i++) {
    const c = raw[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = raw[++i];
    const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', '"': '"', "'": "'", a: '\x07' };
    if (e !== undefined && e in simple) out += simple[e];
    else if (e === 'b') out += '\b';
    else if (e === 'f') out += '\f';
    else if (e === 'v') out += '\v';
    else if (e === 'x' || e === 'u' || e === 'U') {
      const n = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      const hex = raw.slice(i + 1, i + 1 + n);
      if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(hex)) throw new TemplateSyntaxError('bad escape in string');
      const code = Number.parseInt(hex, 16);
      if (code > 0x10ffff) throw new TemplateSyntaxError('bad escape in string');
      out += String.fromCodePoint(code);
      i += n;
    } else throw new TemplateSyntaxError('bad escape in string');
  }
  return out;
}

/** The tokens of one action's body (between `{{` and `}}`, trim markers removed). */
export function lexAction(src: string): Tok[] {
  const toks: Tok[] = [];
  let i = 0;
  let space = false;
  while (i < src.length) {
    const c = src[i]!;
    if (SPACE.test(c)) {
      space = true;
      i++;
      continue;
    }
    const push = (t: Tok) => {
      toks.push(t);
      space = false;
    };
    if (c === '.' && !/[0-9]/.test(src[i + 1] ?? '')) {
      let j = i + 1;
      while (j < src.length && IDENT.test(src[j]!)) j++;
      push(j === i + 1 ? { k: 'dot', v: '.', space } : { k: 'field', v: src.slice(i + 1, j), space });
      i = j;
    } else if (c === '$') {
      let j = i + 1;
      while (j < src.length && IDENT.test(src[j]!)) j++;
      push({ k: 'var', v: src.slice(i, j), space });
      i = j;
    } else if (c === '"') {
      let j = i + 1;
      while (j < src.length && src[j] !== '"') j += src[j] === '\\' ? 2 : 1;
      if (j >= src.length) throw new TemplateSyntaxError('unterminated quoted string');
      push({ k: 'string', v: unquote(src.slice(i, j + 1)), space });
      i = j + 1;
    } else if (c === '`') {
      const j = src.indexOf('`', i + 1);
      if (j < 0) throw new TemplateSyntaxError('unterminated raw quoted string');
      push({ k: 'string', v: src.slice(i + 1, j), space });
      i = j + 1;
    } else if (/[0-9+\-.]/.test(c)) {
      const m = /^[+-]?(?:0[xX][0-9a-fA-F_]+|(?:[0-9][0-9_]*)?(?:\.[0-9_]*)?(?:[eE][+-]?[0-9]+)?)/.exec(src.slice(i));
      const text = m?.[0] ?? '';
      if (!/[0-9]/.test(text)) throw new TemplateSyntaxError(`unexpected "${c}" in command`);
      push({ k: 'number', v: text, space });
      i += text.length;
    } else if (/[A-Za-z_]/.test(c)) {
      let j = i + 1;
      while (j < src.length && IDENT.test(src[j]!)) j++;
      push({ k: 'ident', v: src.slice(i, j), space });
      i = j;
    } else if (c === ':' && src[i + 1] === '=') {
      push({ k: ':=', v: ':=', space });
      i += 2;
    } else if (c === '(' || c === ')' || c === '|' || c === '=' || c === ',') {
      push({ k: c, v: c, space });
      i++;
    } else {
      throw new TemplateSyntaxError(`unexpected "${c}" in command`);
    }
  }
  return toks;
}

export function number(text: string): { t: 'int'; value: bigint } | { t: 'float'; value: number } {
  const clean = text.replace(/_/g, '');
  if (/^[+-]?(0[xX][0-9a-fA-F]+|[0-9]+)$/.test(clean)) {
    const neg = clean.startsWith('-');
    const body = clean.replace(/^[+-]/, '');
    const v = BigInt(body);
    if (v > 2n ** 63n) throw new TemplateSyntaxError(`number out of range: ${text}`);
    return { t: 'int', value: neg ? -v : v };
  }
  const v = Number(clean);
  if (!Number.isFinite(v)) throw new TemplateSyntaxError(`bad number syntax: ${text}`);
  return { t: 'float', value: v };
}
