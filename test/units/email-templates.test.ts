// GoTrue's email templates: Go's text/template action language with html/template's contextual
// escaping (src/mail/template/). Each expected output is what GoTrue (Go's html/template) writes
// for the same template and data; the mailer-level behaviour (fallbacks, render errors) is below.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { escapeHtmlTemplate } from '../../src/mail/template/escape.ts';
import { execute, MAX_STEPS } from '../../src/mail/template/exec.ts';
import { parseTemplate, TemplateSyntaxError } from '../../src/mail/template/parse.ts';
import { fromJson, TemplateExecError } from '../../src/mail/template/values.ts';

const DATA = {
  SiteURL: 'https://app.example.com',
  Email: 'old@example.com',
  NewEmail: 'new@example.com',
  Token: '123456',
  Data: {
    lang: 'fr',
    name: 'Zoë <b>',
    age: 30,
    big: 1234567,
    vip: true,
    address: { city: 'Lyon', zip: '69001' },
    tags: ['a', 'b', 'c'],
    empty: '',
    nothing: null,
    site: 'javascript:alert(1)',
    home: 'https://zoe.example.org/a b?x=1&y=2',
  },
};

/** A body as GoTrue renders it (html/template). */
const html = (src: string, data: unknown = DATA) => execute(escapeHtmlTemplate(parseTemplate(src)), fromJson(data));
/** A subject: the same language, no HTML escaping. */
const text = (src: string, data: unknown = DATA) => execute(parseTemplate(src), fromJson(data));

describe('the action language', () => {
  test.each([
    ['{{ if eq .Data.lang "fr" }}Bonjour{{ else }}Hello{{ end }}', 'Bonjour'],
    ['{{ if eq .Data.lang "de" }}Hallo{{ else if eq .Data.lang "fr" }}Salut{{ else }}Hi{{ end }}', 'Salut'],
    ['{{ if eq .Data.lang "de" "fr" }}de or fr{{ end }}', 'de or fr'],
    ['{{ if ne .Data.lang "fr" }}x{{ else }}y{{ end }}', 'y'],
    ['{{ if and .Data.vip (eq .Data.lang "fr") }}VIP{{ end }}', 'VIP'],
    ['{{ if or .Data.empty .Data.missing }}t{{ else }}f{{ end }}', 'f'],
    ['{{ or .Data.empty "fallback" }}', 'fallback'],
    ['{{ and .Data.vip .Data.lang }}', 'fr'],
    ['{{ if not .Data.empty }}empty{{ end }}', 'empty'],
    ['{{ .Data.address.city }} {{ .Data.address.zip }}', 'Lyon 69001'],
    ['[{{ .Data.missing }}][{{ .Data.missing.deeper }}][{{ .Unknown }}][{{ .Data.nothing }}]', '[][][][]'],
    ['{{ with .Data.address }}{{ .city }}{{ end }}', 'Lyon'],
    ['{{ with .Data.missing }}yes{{ else }}no{{ end }}', 'no'],
    ['{{ with $c := .Data.address.city }}{{ $c }}{{ end }}', 'Lyon'],
    ['{{ range .Data.tags }}<{{ . }}>{{ end }}', '<a><b><c>'],
    ['{{ range .Data.tags }}{{ "<" }}{{ . }}{{ end }}', '&lt;a&lt;b&lt;c'],
    ['{{ range $i, $t := .Data.tags }}{{ $i }}={{ $t }};{{ end }}', '0=a;1=b;2=c;'],
    ['{{ range $k, $v := .Data.address }}{{ $k }}:{{ $v }} {{ end }}', 'city:Lyon zip:69001 '],
    ['{{ range .Data.missing }}x{{ else }}none{{ end }}', 'none'],
    ['{{ range .Data.tags }}{{ if eq . "b" }}{{ break }}{{ end }}{{ . }}{{ end }}', 'a'],
    ['{{ range .Data.tags }}{{ if eq . "b" }}{{ continue }}{{ end }}{{ . }}{{ end }}', 'ac'],
    ['{{ range 3 }}{{ . }}{{ end }}', '012'],
    ['{{ index .Data.tags 1 }}{{ index .Data "lang" }}{{ index .Data.address "nope" }}', 'bfr'],
    ['{{ len .Data.tags }} {{ len .Data.name }} {{ len .Data.address }}', '3 8 2'], // bytes, as Go's len
    ['{{ $x := "a" }}{{ $x }}{{ $x = "b" }}{{ $x }}', 'ab'],
    ['{{ $.SiteURL }}{{ with .Data }}{{ $.Email }}{{ end }}', 'https://app.example.comold@example.com'],
    ['a  {{- " b " -}}  c', 'a b c'],
    ['a {{- /* note */ -}} b{{/* x */}}c', 'abc'],
    // Go prints a float64 of 7 digits or more as %e, and html/template escapes its "+".
    ['{{ .Data.age }} {{ .Data.big }} {{ .Data.vip }} {{ .Data.tags }}', '30 1.234567e&#43;06 true [a b c]'],
    ['{{ .Data.address }}', 'map[city:Lyon zip:69001]'],
    ['{{ print "a" 1 2 "b" }}', 'a1 2b'],
    ['{{ printf "%s is %v" .Data.lang .Data.age }}', 'fr is 30'],
    ['{{ .Data.lang | printf "[%s]" }}', '[fr]'],
    ['{{ lt 1 2 }} {{ ge .Data.age 30.0 }} {{ gt "b" "a" }}', 'true true true'],
    ['{{ urlquery "a b&c" }}', 'a&#43;b%26c'],
    ['<a href="/x?q={{ urlquery "a b" }}">', '<a href="/x?q=a&#43;b">'], // the attribute decodes to a+b
    ['{{ if (eq .Data.lang "fr") }}({{ (index .Data.tags 0) }}){{ end }}', '(a)'],
    ['{{ `raw {{ text }}` }}', 'raw {{ text }}'],
  ])('%s', (src, want) => {
    expect(html(src)).toBe(want);
  });

  test('a subject renders the same language without HTML escaping', () => {
    expect(text('Bienvenue {{ .Data.name }}{{ if .Data.vip }} (VIP){{ end }}')).toBe('Bienvenue Zoë <b> (VIP)');
    expect(text('{{ .Data.big }}')).toBe('1.234567e+06');
    expect(text('{{ .Data.missing }}|{{ .Data.nothing }}')).toBe('|');
  });

  test.each([
    ['{{ if .x }}', 'unexpected EOF'],
    ['{{ end }}', 'unexpected {{end}}'],
    ['{{ .Data.name | upper }}', 'function "upper" not defined'],
    ['{{ "unterminated }}', 'unterminated quoted string'],
    ['{{ .a', 'unclosed action'],
    ['{{ template "x" }}', 'not supported'],
    ['{{/* comment }}', 'unclosed comment'],
    ['{{ break }}', 'outside {{range}}'],
    ['{{ nil }}', 'nil is not a command'],
    ['{{ }}', 'missing value for command'],
  ])('syntax error: %s', (src, message) => {
    expect(() => parseTemplate(src)).toThrow(TemplateSyntaxError);
    expect(() => parseTemplate(src)).toThrow(message);
  });

  test.each([
    ['{{ if eq .Data.age "30" }}x{{ end }}', 'incompatible types for comparison'],
    ['{{ if eq .Data.age 30 }}x{{ end }}', 'incompatible types for comparison'], // float64 against int, as in Go
    ['{{ .Data.nothing.name }}', 'nil pointer evaluating interface {}.name'],
    ['{{ .Data.lang.name }}', "can't evaluate field name in type string"],
    ['{{ index .Data.tags 5 }}', 'index out of range: 5'],
    ['{{ len .Data.age }}', 'len of type float64'],
    ['{{ range .Data.age }}{{ end }}', "range can't iterate over 30"],
    ['{{ lt .Data.vip true }}', 'invalid type for comparison'],
    ['{{ $nope }}', 'undefined variable: $nope'],
    ['{{ not 1 2 }}', 'wrong number of args for not: want 1 got 2'],
    ['{{ .Data.lang "x" }}', "can't give argument to non-function"],
  ])('render error: %s', (src, message) => {
    expect(() => html(src)).toThrow(TemplateExecError);
    expect(() => html(src)).toThrow(message);
  });

  test('a template cannot run or grow without bound', () => {
    expect(() => html('{{ range 100000000 }}{{ end }}')).toThrow('too many steps');
    expect(() => html('{{ range 150000 }}xxxxxxxxxxxxxxxxxxxx{{ end }}')).toThrow(/too many steps|output too large/);
    expect(MAX_STEPS).toBeLessThanOrEqual(1_000_000);
  });
});

describe('contextual escaping (html/template)', () => {
  test.each([
    ['<p>{{ .Data.name }}</p>', '<p>Zoë &lt;b&gt;</p>'],
    ['<p>{{ "a+b & \'c\' \\"d\\"" }}</p>', '<p>a&#43;b &amp; &#39;c&#39; &#34;d&#34;</p>'],
    ['<a title="{{ .Data.name }}">', '<a title="Zoë &lt;b&gt;">'],
    ["<a title='{{ \"it's\" }}'>", "<a title='it&#39;s'>"],
    ['<a title={{ "a b" }}>', '<a title=a&#32;b>'],
    ['<a title={{ "" }}>', '<a title=ZgotmplZ>'],
    ['<a href="{{ .Data.site }}">x</a>', '<a href="#ZgotmplZ">x</a>'],
    ['<a href="{{ "data:text/html,<b>" }}">', '<a href="#ZgotmplZ">'],
    ['<a href="{{ "JavaScript:x" }}">', '<a href="#ZgotmplZ">'],
    ['<a href="{{ .Data.home }}">', '<a href="https://zoe.example.org/a%20b?x=1&amp;y=2">'],
    ['<a href="{{ "mailto:z@example.org" }}">', '<a href="mailto:z@example.org">'],
    ['<a href="{{ "/path/x y" }}">', '<a href="/path/x%20y">'],
    ['<a href="https://x.example/?q={{ "a b&c=d" }}">', '<a href="https://x.example/?q=a%20b%26c%3dd">'],
    ['<a href="https://x.example/{{ "javascript:x" }}">', '<a href="https://x.example/javascript:x">'],
    ['<img src="{{ .Data.site }}">', '<img src="#ZgotmplZ">'],
    ['<a data-url="{{ .Data.site }}">', '<a data-url="#ZgotmplZ">'],
    ['<a href={{ .Data.site }}>', '<a href=#ZgotmplZ>'],
    ['<!-- {{ .Token }} secret -->after', 'after'],
    ['<input {{ "checked" }}>', '<input checked>'],
    ['<input {{ "onclick" }}>', '<input ZgotmplZ>'],
    ['<title>{{ .Data.name }}</title>', '<title>Zoë &lt;b&gt;</title>'],
    ['<script>var x = {{ .Data.name }};</script>', '<script>var x = ZgotmplZ;</script>'],
    ['<a onclick="f({{ .Data.name }})">', '<a onclick="f(ZgotmplZ)">'],
    ['<p style="color: {{ "red" }}">', '<p style="color: ZgotmplZ">'],
    ['<p>{{ html "<b>" }}</p>', '<p>&lt;b&gt;</p>'], // not escaped twice
    ['<p>{{ "<b>" | html }}</p>', '<p>&lt;b&gt;</p>'],
  ])('%s', (src, want) => {
    expect(html(src)).toBe(want);
  });

  test.each([
    ['<a href="{{ if .Data.vip }}x">{{ else }}y"{{ end }}', 'branches end in different contexts'],
    ['<a href="{{ if .Data.vip }}?q={{ end }}{{ .Token }}">', 'ambiguous context within a URL'],
    ['<a href="x', 'ends in a non-text context'],
  ])('html/template refuses %s at render time', (src, message) => {
    expect(() => html(src)).toThrow(TemplateExecError);
    expect(() => html(src)).toThrow(message);
  });
});

describe('random templates and data', () => {
  const pieces = [
    '{{ .Data.a }}',
    '{{ .Data.b.c }}',
    '{{ if .Data.a }}',
    '{{ else }}',
    '{{ end }}',
    '{{ range .Data.list }}',
    '{{ with .Data.b }}',
    '{{ eq .Data.a "x" }}',
    '{{ index .Data.list 0 }}',
    '{{ len .Data.list }}',
    '{{ $v := .Data.a }}',
    '{{ $v }}',
    '{{- " " -}}',
    '{{/* c */}}',
    '<a href="',
    '">',
    '<p title=',
    '>',
    '<!--',
    '-->',
    'text ',
    '{{',
    '}}',
    '"',
    '<script>',
    '</script>',
    '?',
    '{{ break }}',
  ];
  const json = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.string(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(fc.constantFrom('a', 'b', 'c', 'list'), tie('value'), { maxKeys: 4 }),
    ),
  })).value;

  test('parse, escape and render end in output or in one of the two template errors, never anything else', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 24 }), json, (parts, data) => {
        const src = parts.join('');
        try {
          const out = html(src, { Data: data });
          expect(typeof out).toBe('string');
        } catch (err) {
          if (!(err instanceof TemplateSyntaxError) && !(err instanceof TemplateExecError)) throw err;
        }
      }),
      { numRuns: 3000 },
    );
  });
});
