// The action language of Go's text/template, as GoTrue's email templates use it, parsed into a
// tree (docs/decisions/email-templates.md): `{{ .Field.chain }}`, `$`, `$var := …` / `$var = …`,
// pipelines `a | f b`, parenthesised pipelines, string / raw string / number / true / false / nil
// literals, `if` / `else if` / `else`, `with` / `else with` / `else`, `range` (with `$i, $e :=`,
// `else`, `break`, `continue`), trim markers `{{-` / `-}}` and comments `{{/* */}}`. A function
// outside BUILTINS, `define`, `template` and `block` are syntax errors, as an undefined function
// is in Go: GoTrue then falls back to the built-in template of that kind.

import { lexAction, number, SPACE, type Tok } from './lex.ts';
import { TemplateSyntaxError } from './syntax-error.ts';

export { TemplateSyntaxError };

/** Go's predefined functions this interpreter knows (exec.ts implements them). */
export const BUILTINS = new Set([
  'and',
  'or',
  'not',
  'eq',
  'ne',
  'lt',
  'le',
  'gt',
  'ge',
  'len',
  'index',
  'print',
  'println',
  'printf',
  'html',
  'js',
  'urlquery',
]);

export type Operand =
  | { t: 'dot' }
  | { t: 'field'; names: string[] } // .a.b (from dot)
  | { t: 'var'; name: string; names: string[] } // $x.a.b
  | { t: 'func'; name: string }
  | { t: 'string'; value: string }
  | { t: 'int'; value: bigint }
  | { t: 'float'; value: number }
  | { t: 'bool'; value: boolean }
  | { t: 'nil' }
  | { t: 'pipe'; pipe: Pipeline; names: string[] }; // (pipeline).a.b

export interface Command {
  args: Operand[];
}

export interface Pipeline {
  /** Variables declared (`:=`) or assigned (`=`) by this pipeline. */
  decl: string[];
  assign: boolean;
  cmds: Command[];
}

export type Node =
  | { t: 'text'; text: string }
  | { t: 'action'; pipe: Pipeline; escapers?: string[] }
  | { t: 'if' | 'with' | 'range'; pipe: Pipeline; list: Node[]; elseList?: Node[] }
  | { t: 'break' | 'continue' };

class ActionParser {
  private i = 0;
  constructor(private readonly toks: Tok[]) {}

  private peek(): Tok | undefined {
    return this.toks[this.i];
  }

  done(): boolean {
    return this.i >= this.toks.length;
  }

  pipeline(): Pipeline {
    const decl: string[] = [];
    let assign = false;
    // `$x :=`, `$x =`, `$i, $e :=` (range)
    const save = this.i;
    const vars: string[] = [];
    while (this.peek()?.k === 'var') {
      vars.push(this.toks[this.i++]!.v);
      if (this.peek()?.k === ',' && vars.length === 1) {
        this.i++;
        continue;
      }
      break;
    }
    const op = this.peek();
    if (vars.length > 0 && (op?.k === ':=' || op?.k === '=')) {
      this.i++;
      decl.push(...vars);
      assign = op.k === '=';
    } else {
      this.i = save;
    }
    const cmds: Command[] = [];
    for (;;) {
      cmds.push(this.command());
      if (this.peek()?.k !== '|') break;
      this.i++;
    }
    return { decl, assign, cmds };
  }

  private command(): Command {
    const args: Operand[] = [];
    while (!this.done()) {
      const tok = this.peek()!;
      if (tok.k === '|' || tok.k === ')') break;
      if (args.length > 0 && !tok.space && tok.k !== '(')
        throw new TemplateSyntaxError('missing space between operands');
      args.push(this.operand());
    }
    if (args.length === 0) throw new TemplateSyntaxError('missing value for command');
    if (args[0]!.t === 'nil' && args.length === 1) throw new TemplateSyntaxError('nil is not a command');
    return { args };
  }

  /** A term and the field names chained right after it (no space). */
  private chain(): string[] {
    const names: string[] = [];
    while (this.peek()?.k === 'field' && !this.peek()!.space) names.push(this.toks[this.i++]!.v);
    return names;
  }

  private operand(): Operand {
    const tok = this.toks[this.i++]!;
    switch (tok.k) {
      case 'dot':
        if (this.peek()?.k === 'field' && !this.peek()!.space) throw new TemplateSyntaxError('unexpected . after term');
        return { t: 'dot' };
      case 'field':
        return { t: 'field', names: [tok.v, ...this.chain()] };
      case 'var':
        return { t: 'var', name: tok.v, names: this.chain() };
      case 'string':
        return { t: 'string', value: tok.v };
      case 'number':
        return number(tok.v);
      case 'ident':
        if (tok.v === 'true' || tok.v === 'false') return { t: 'bool', value: tok.v === 'true' };
        if (tok.v === 'nil') return { t: 'nil' };
        if (!BUILTINS.has(tok.v)) throw new TemplateSyntaxError(`function "${tok.v}" not defined`);
        return { t: 'func', name: tok.v };
      case '(': {
        const pipe = this.pipeline();
        if (this.peek()?.k !== ')') throw new TemplateSyntaxError('unclosed left paren');
        this.i++;
        return { t: 'pipe', pipe, names: this.chain() };
      }
      default:
        throw new TemplateSyntaxError(`unexpected "${tok.v}" in operand`);
    }
  }
}

function parsePipeline(body: string, context: string): Pipeline {
  const p = new ActionParser(lexAction(body));
  if (p.done()) throw new TemplateSyntaxError(`missing value for ${context}`);
  const pipe = p.pipeline();
  if (!p.done()) throw new TemplateSyntaxError(`unexpected token in ${context}`);
  return pipe;
}

type Item = { t: 'text'; text: string } | { t: 'action'; body: string };

/** Splits the source into text and action bodies, applying trim markers and dropping comments. */
function items(src: string): Item[] {
  const out: Item[] = [];
  let i = 0;
  let trimNext = false;
  while (i <= src.length) {
    const open = src.indexOf('{{', i);
    let text = src.slice(i, open < 0 ? src.length : open);
    if (trimNext) text = text.replace(/^[ \t\r\n]+/, '');
    trimNext = false;
    if (open < 0) {
      if (text) out.push({ t: 'text', text });
      break;
    }
    let j = open + 2;
    if (src[j] === '-' && SPACE.test(src[j + 1] ?? '')) {
      text = text.replace(/[ \t\r\n]+$/, '');
      j += 2;
    }
    if (text) out.push({ t: 'text', text });
    // A comment starts right after the delimiter (and its trim marker) and ends right before one.
    if (src.startsWith('/*', j)) {
      const end = src.indexOf('*/', j + 2);
      if (end < 0) throw new TemplateSyntaxError('unclosed comment');
      let k = end + 2;
      if (/^[ \t\r\n]-}}/.test(src.slice(k, k + 4))) {
        trimNext = true;
        k += 4;
      } else if (src.startsWith('}}', k)) k += 2;
      else throw new TemplateSyntaxError('comment ends before closing delimiter');
      i = k;
      continue;
    }
    // The action ends at the first `}}` outside a quoted string.
    let k = j;
    for (;;) {
      if (k >= src.length) throw new TemplateSyntaxError('unclosed action');
      const c = src[k]!;
      if (c === '"') {
        k++;
        while (k < src.length && src[k] !== '"' && src[k] !== '\n') k += src[k] === '\\' ? 2 : 1;
        if (src[k] !== '"') throw new TemplateSyntaxError('unterminated quoted string');
        k++;
      } else if (c === '`') {
        const end = src.indexOf('`', k + 1);
        if (end < 0) throw new TemplateSyntaxError('unterminated raw quoted string');
        k = end + 1;
      } else if (c === '}' && src[k + 1] === '}') break;
      else k++;
    }
    let body = src.slice(j, k);
    if (/[ \t\r\n]-$/.test(body)) {
      body = body.slice(0, -1);
      trimNext = true;
    }
    out.push({ t: 'action', body });
    i = k + 2;
  }
  return out;
}

const KEYWORD = /^\s*(if|else|end|with|range|break|continue|define|template|block)\b/;

/** Parses a template; throws TemplateSyntaxError as Go's parser would refuse it. */
export function parseTemplate(src: string): Node[] {
  const list = items(src);
  let pos = 0;
  type Stop = 'end' | 'else';
  let loops = 0;

  const parseList = (stops: boolean): { nodes: Node[]; stop?: Stop; rest?: string } => {
    const nodes: Node[] = [];
    while (pos < list.length) {
      const item = list[pos++]!;
      if (item.t === 'text') {
        nodes.push({ t: 'text', text: item.text });
        continue;
      }
      const kw = KEYWORD.exec(item.body)?.[1];
      const rest = kw ? item.body.slice(item.body.indexOf(kw) + kw.length) : item.body;
      switch (kw) {
        case 'end':
          if (!stops || rest.trim()) throw new TemplateSyntaxError('unexpected {{end}}');
          return { nodes, stop: 'end' };
        case 'else':
          if (!stops) throw new TemplateSyntaxError('unexpected {{else}}');
          return { nodes, stop: 'else', rest };
        case 'if':
        case 'with':
        case 'range':
          nodes.push(control(kw, rest));
          break;
        case 'break':
        case 'continue':
          if (loops === 0 || rest.trim()) throw new TemplateSyntaxError(`{{${kw}}} outside {{range}}`);
          nodes.push({ t: kw });
          break;
        case 'define':
        case 'template':
        case 'block':
          throw new TemplateSyntaxError(`{{${kw}}} is not supported in email templates`);
        default:
          nodes.push({ t: 'action', pipe: parsePipeline(item.body, 'command') });
      }
    }
    if (stops) throw new TemplateSyntaxError('unexpected EOF');
    return { nodes };
  };

  const control = (kind: 'if' | 'with' | 'range', rest: string): Node => {
    const pipe = parsePipeline(rest, kind);
    if (kind === 'range') loops++;
    const body = parseList(true);
    if (kind === 'range') loops--;
    const node: Node = { t: kind, pipe, list: body.nodes };
    if (body.stop === 'else') {
      const chained = /^\s*(if|with)\b/.exec(body.rest ?? '');
      if (chained && kind !== 'range' && chained[1] === kind) {
        // `{{else if …}}` is `{{else}}{{if …}}…{{end}}{{end}}` with one shared {{end}}.
        const r = (body.rest ?? '').slice((body.rest ?? '').indexOf(chained[1]) + chained[1].length);
        node.elseList = [control(kind, r)];
      } else {
        if ((body.rest ?? '').trim()) throw new TemplateSyntaxError('unexpected token in else');
        const alt = parseList(true);
        if (alt.stop !== 'end') throw new TemplateSyntaxError('expected end; found else');
        node.elseList = alt.nodes;
      }
    }
    return node;
  };

  return parseList(false).nodes;
}
