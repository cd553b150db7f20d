// The plain-text part of an email, made from its rendered HTML: tags dropped, entities decoded,
// links kept as `label: url` so the text part stays usable.
const NAMED_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (m, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : m;
    }
    return NAMED_ENTITIES[e.toLowerCase()] ?? m;
  });
}

/**
 * A readable plain-text version of an HTML template, still containing its `{{ }}` variables so
 * they can be filled in unescaped. Links keep their target, since the text part must stay usable.
 */
export function htmlToText(html: string): string {
  return (
    decodeEntities(
      html
        .replace(/<!--[\s\S]*?-->/g, '')
        .replace(/<(head|style|script|title)\b[\s\S]*?<\/\1\s*>/gi, '')
        .replace(
          /<a\b[^>]*?\bhref\s*=\s*(?:"([^"]*)"|'([^']*)')[^>]*>([\s\S]*?)<\/a\s*>/gi,
          (_m, dq: string | undefined, sq: string | undefined, label: string) => {
            const href = (dq ?? sq ?? '').trim();
            const text = label.replace(/<[^>]*>/g, '').trim();
            return !text || text === href ? href : `${text}: ${href}`;
          },
        )
        .replace(/<br\s*\/?>/gi, '\n')
        .replace(/<\/(p|div|h[1-6]|li|tr|table|blockquote|pre)\s*>/gi, '\n\n')
        .replace(/<li\b[^>]*>/gi, '- ')
        .replace(/<[^>]*>/g, ''),
    )
      .split('\n')
      .map((line) => line.replace(/[ \t\r\f\v]+/g, ' ').trim())
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trim() + '\n'
  );
}
