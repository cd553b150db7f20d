// Summarizes a V8 .cpuprofile (from `npm run bench -- --cpu-prof`): where the server's CPU went,
// self time by package / source file and by function, and inclusive time of the functions that
// match --focus (synchronous stacks only: time spent awaiting is not on any stack).
//
// usage: node --import tsx bench/cpuprofile-summary.ts <file.cpuprofile> [--top 30] [--focus <regex>]
//          [--callers <regex>]   who calls the functions matching <regex> (first package frame up the stack)
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string' }, focus: { type: 'string' }, callers: { type: 'string' } },
});
const file = positionals[0];
if (!file) {
  process.stderr.write(
    'usage: node --import tsx bench/cpuprofile-summary.ts <file.cpuprofile> [--top N] [--focus regex]\n',
  );
  process.exit(2);
}
const top = Number(values.top ?? '30');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

const byId = new Map<number, ProfileNode>();
const parent = new Map<number, number>();
for (const n of profile.nodes) {
  byId.set(n.id, n);
  for (const c of n.children ?? []) parent.set(c, n.id);
}

/** node_modules/<pkg>, src/…, node:internal, or a V8 pseudo-frame such as (garbage collector). */
function where(cf: CallFrame): string {
  const url = cf.url;
  if (!url) return cf.functionName.startsWith('(') ? cf.functionName : '(native)';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1]!;
  const src = /\/(src|bench|drizzle)\/(.*)$/.exec(url);
  if (src) return `${src[1]}/${src[2]}`;
  if (url.startsWith('node:')) return url.replace(/^node:internal\/([^/]+).*/, 'node:internal/$1');
  return url;
}

const fnKey = (cf: CallFrame) => `${cf.functionName || '(anonymous)'} ${where(cf)}:${cf.lineNumber + 1}`;

const selfByWhere = new Map<string, number>();
const selfByFn = new Map<string, number>();
const inclusive = new Map<string, number>();
const focus = values.focus ? new RegExp(values.focus) : undefined;
const callersOf = values.callers ? new RegExp(values.callers) : undefined;
const callers = new Map<string, number>();
let total = 0;
let idle = 0;
const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);

for (let i = 0; i < profile.samples.length; i++) {
  const dt = (profile.timeDeltas[i] ?? 0) / 1000; // ms
  const node = byId.get(profile.samples[i]!);
  if (!node) continue;
  if (node.callFrame.functionName === '(idle)') {
    idle += dt;
    continue;
  }
  total += dt;
  add(selfByWhere, where(node.callFrame), dt);
  add(selfByFn, fnKey(node.callFrame), dt);
  if (callersOf?.test(fnKey(node.callFrame))) {
    // The first frame up the stack that belongs to a package or to our code names the caller.
    let caller = '(unknown)';
    for (let id = parent.get(node.id); id !== undefined; id = parent.get(id)) {
      const cf = byId.get(id)!.callFrame;
      const w = where(cf);
      if (!w.startsWith('node:') && !w.startsWith('(')) {
        caller = fnKey(cf);
        break;
      }
    }
    add(callers, caller, dt);
  }
  if (focus) {
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const cf = byId.get(id)!.callFrame;
      const k = fnKey(cf);
      if (!seen.has(k) && focus.test(k)) {
        seen.add(k);
        add(inclusive, k, dt);
      }
    }
  }
}

const pct = (v: number) => `${((v / total) * 100).toFixed(1).padStart(5)}%`;
const print = (title: string, m: Map<string, number>, n: number) => {
  process.stdout.write(`\n${title}\n`);
  for (const [k, v] of [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, n)) {
    process.stdout.write(`  ${pct(v)} ${v.toFixed(0).padStart(7)} ms  ${k}\n`);
  }
};
const wall = (profile.endTime - profile.startTime) / 1000;
process.stdout.write(
  `${file}\nwall ${wall.toFixed(0)} ms, on-CPU (non-idle samples) ${total.toFixed(0)} ms, idle ${idle.toFixed(0)} ms\n`,
);
print('self time by package / file', selfByWhere, top);
print('self time by function', selfByFn, top);
if (callersOf) print(`callers of /${values.callers}/ (self time of the callee)`, callers, top);
if (focus) print(`inclusive time (synchronous stacks) of functions matching /${values.focus}/`, inclusive, top);
