// Runs a parsed template (parse.ts) over GoTrue's template data, as text/template executes it,
// with the escapers that escape.ts put on each action. Bounded: at most MAX_STEPS evaluations and
// MAX_OUTPUT characters, so no template can hang a request or fill its memory.
import type { Command, Node, Operand, Pipeline } from './parse.ts';
import {
  compare,
  eq,
  field,
  formatValue,
  type GoValue,
  index,
  isMap,
  length,
  MISSING,
  sprint,
  TemplateExecError,
  truth,
  typeName,
} from './values.ts';
import { ESCAPERS, htmlEscape, jsEscape, queryEscape } from './escape.ts';

export const MAX_STEPS = 200_000;
export const MAX_OUTPUT = 2_000_000;

const BREAK = Symbol('break');
const CONTINUE = Symbol('continue');

/** What an action prints, as html/template's stringify: nil and missing values print nothing. */
export function stringify(v: GoValue): string {
  return v === MISSING || v === null ? '' : formatValue(v);
}

function printf(format: GoValue, args: GoValue[]): string {
  if (typeof format !== 'string')
    throw new TemplateExecError(`wrong type for value; expected string; got ${typeName(format)}`);
  let n = 0;
  const out = format.replace(/%([-+# 0]*)(\d+)?(?:\.(\d+))?([a-zA-Z%])/g, (_m, _flags, _width, prec, verb: string) => {
    if (verb === '%') return '%';
    if (n >= args.length) return `%!${verb}(MISSING)`;
    const a = args[n++]!;
    switch (verb) {
      case 'v':
        return formatValue(a);
      case 's':
        return typeof a === 'string' ? a : `%!s(${typeName(a)}=${formatValue(a)})`;
      case 'd':
        return typeof a === 'bigint' ? String(a) : `%!d(${typeName(a)}=${formatValue(a)})`;
      case 't':
        return typeof a === 'boolean' ? String(a) : `%!t(${typeName(a)}=${formatValue(a)})`;
      case 'q':
        return typeof a === 'string' ? JSON.stringify(a) : `%!q(${typeName(a)}=${formatValue(a)})`;
      case 'f':
        return typeof a === 'number'
          ? a.toFixed(prec === undefined ? 6 : Number(prec))
          : `%!f(${typeName(a)}=${formatValue(a)})`;
      default:
        return `%!${verb}(${typeName(a)}=${formatValue(a)})`;
    }
  });
  const extra = args.slice(n);
  return extra.length ? `${out}%!(EXTRA ${extra.map((a) => `${typeName(a)}=${formatValue(a)}`).join(', ')})` : out;
}

class Exec {
  private steps = 0;
  private out = '';
  private vars: { name: string; value: GoValue }[];

  constructor(private readonly root: GoValue) {
    this.vars = [{ name: '$', value: root }];
  }

  private step(): void {
    if (++this.steps > MAX_STEPS) throw new TemplateExecError('template takes too many steps');
  }

  private write(s: string): void {
    this.out += s;
    if (this.out.length > MAX_OUTPUT) throw new TemplateExecError('template output too large');
  }

  run(nodes: Node[]): string {
    this.list(nodes, this.root);
    return this.out;
  }

  private list(nodes: Node[], dot: GoValue): void {
    for (const node of nodes) this.node(node, dot);
  }

  private scoped(fn: () => void): void {
    const mark = this.vars.length;
    try {
      fn();
    } finally {
      this.vars.length = mark;
    }
  }

  private node(node: Node, dot: GoValue): void {
    this.step();
    switch (node.t) {
      case 'text':
        this.write(node.text);
        return;
      case 'action': {
        const v = this.pipeline(node.pipe, dot);
        if (node.pipe.decl.length > 0) return; // a declaration prints nothing
        let s = stringify(v);
        for (const name of node.escapers ?? []) s = ESCAPERS[name]!(s);
        this.write(s);
        return;
      }
      case 'if':
      case 'with':
        this.scoped(() => {
          const v = this.pipeline(node.pipe, dot);
          if (truth(v)) this.scoped(() => this.list(node.list, node.t === 'with' ? v : dot));
          else if (node.elseList) this.scoped(() => this.list(node.elseList!, dot));
        });
        return;
      case 'range':
        this.scoped(() => this.range(node, dot));
        return;
      case 'break':
        throw BREAK;
      case 'continue':
        throw CONTINUE;
    }
  }

  private range(node: Extract<Node, { t: 'if' | 'with' | 'range' }>, dot: GoValue): void {
    const { decl } = node.pipe;
    const v = this.pipeline({ ...node.pipe, decl: [] }, dot);
    let items: [GoValue, GoValue][];
    if (v === MISSING || v === null) items = [];
    else if (Array.isArray(v)) items = v.map((e, i) => [BigInt(i), e]);
    else if (isMap(v))
      items = Object.keys(v)
        .sort()
        .map((k) => [k, v[k]!]);
    else if (typeof v === 'bigint') {
      if (decl.length > 1) throw new TemplateExecError("can't use two variables when ranging over an int");
      items = [];
      for (let i = 0n; i < v; i++) {
        this.step();
        items.push([i, i]);
      }
    } else throw new TemplateExecError(`range can't iterate over ${formatValue(v)}`);
    if (items.length === 0) {
      if (node.elseList) this.scoped(() => this.list(node.elseList!, dot));
      return;
    }
    for (const [key, elem] of items) {
      try {
        this.scoped(() => {
          if (decl.length === 1) this.vars.push({ name: decl[0]!, value: elem });
          if (decl.length === 2) this.vars.push({ name: decl[0]!, value: key }, { name: decl[1]!, value: elem });
          this.list(node.list, elem);
        });
      } catch (signal) {
        if (signal === BREAK) break;
        if (signal !== CONTINUE) throw signal;
      }
    }
  }

  private lookupVar(name: string): GoValue {
    for (let i = this.vars.length - 1; i >= 0; i--) if (this.vars[i]!.name === name) return this.vars[i]!.value;
    throw new TemplateExecError(`undefined variable: ${name}`);
  }

  private pipeline(pipe: Pipeline, dot: GoValue): GoValue {
    let value: GoValue | undefined;
    for (const cmd of pipe.cmds) value = this.command(cmd, dot, value);
    const result = value ?? MISSING;
    for (const name of pipe.decl) {
      if (pipe.assign) {
        let found = false;
        for (let i = this.vars.length - 1; i >= 0 && !found; i--) {
          if (this.vars[i]!.name === name) {
            this.vars[i]!.value = result;
            found = true;
          }
        }
        if (!found) throw new TemplateExecError(`undefined variable: ${name}`);
      } else {
        this.vars.push({ name, value: result });
      }
    }
    return result;
  }

  private chain(v: GoValue, names: string[]): GoValue {
    let cur = v;
    for (const name of names) cur = field(cur, name);
    return cur;
  }

  private operand(op: Operand, dot: GoValue): GoValue {
    this.step();
    switch (op.t) {
      case 'dot':
        return dot;
      case 'field':
        return this.chain(dot, op.names);
      case 'var':
        return this.chain(this.lookupVar(op.name), op.names);
      case 'pipe':
        return this.chain(
          this.scopedValue(() => this.pipeline(op.pipe, dot)),
          op.names,
        );
      case 'string':
      case 'int':
      case 'float':
      case 'bool':
        return op.value;
      case 'nil':
        return null;
      case 'func':
        return this.call(op.name, [], dot, undefined);
    }
  }

  private scopedValue(fn: () => GoValue): GoValue {
    const mark = this.vars.length;
    try {
      return fn();
    } finally {
      this.vars.length = mark;
    }
  }

  private command(cmd: Command, dot: GoValue, final: GoValue | undefined): GoValue {
    const [first, ...rest] = cmd.args;
    if (first?.t === 'func') return this.call(first.name, rest, dot, final);
    if (rest.length > 0 || final !== undefined) throw new TemplateExecError("can't give argument to non-function");
    return this.operand(first!, dot);
  }

  private call(name: string, argOps: Operand[], dot: GoValue, final: GoValue | undefined): GoValue {
    this.step();
    const lazy = argOps.map((op) => () => this.operand(op, dot));
    if (final !== undefined) lazy.push(() => final);
    if (name === 'and' || name === 'or') {
      if (lazy.length === 0) throw new TemplateExecError(`wrong number of args for ${name}: want at least 1 got 0`);
      let v: GoValue = MISSING;
      for (const arg of lazy) {
        v = arg();
        if (truth(v) !== (name === 'and')) return v;
      }
      return v;
    }
    const args = lazy.map((f) => f());
    const arity = (n: number) => {
      if (args.length !== n)
        throw new TemplateExecError(`wrong number of args for ${name}: want ${n} got ${args.length}`);
    };
    switch (name) {
      case 'not':
        arity(1);
        return !truth(args[0]!);
      case 'eq':
        if (args.length === 0) throw new TemplateExecError('wrong number of args for eq: want at least 1 got 0');
        return eq(args[0]!, args.slice(1));
      case 'ne':
        arity(2);
        return !eq(args[0]!, [args[1]!]);
      case 'lt':
        arity(2);
        return compare(args[0]!, args[1]!) < 0;
      case 'le':
        arity(2);
        return compare(args[0]!, args[1]!) <= 0;
      case 'gt':
        arity(2);
        return compare(args[0]!, args[1]!) > 0;
      case 'ge':
        arity(2);
        return compare(args[0]!, args[1]!) >= 0;
      case 'len':
        arity(1);
        return length(args[0]!);
      case 'index':
        if (args.length === 0) throw new TemplateExecError('wrong number of args for index: want at least 1 got 0');
        return index(args[0]!, args.slice(1));
      case 'print':
        return sprint(args);
      case 'println':
        return `${args.map(formatValue).join(' ')}\n`;
      case 'printf':
        if (args.length === 0) throw new TemplateExecError('wrong number of args for printf: want at least 1 got 0');
        return printf(args[0]!, args.slice(1));
      case 'html':
        return htmlEscape(sprint(args));
      case 'js':
        return jsEscape(sprint(args));
      case 'urlquery':
        return queryEscape(sprint(args));
      default:
        throw new TemplateExecError(`function "${name}" not defined`);
    }
  }
}

/** Executes `nodes` over `data`; throws TemplateExecError as Go's Execute would fail. */
export function execute(nodes: Node[], data: GoValue): string {
  return new Exec(data).run(nodes);
}
