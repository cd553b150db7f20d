// Plain-text table (Markdown pipe syntax, so it pastes into the README as is).
export function renderTable(headers: string[], rows: string[][], rightAligned: Set<number>): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const cell = (s: string, i: number) => (rightAligned.has(i) ? s.padStart(widths[i]!) : s.padEnd(widths[i]!));
  const line = (cells: string[]) => `| ${cells.map((c, i) => cell(c, i)).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (rightAligned.has(i) ? '-'.repeat(w + 1) + ':' : '-'.repeat(w + 2))).join('|')}|`;
  return [line(headers), rule, ...rows.map((r) => line(headers.map((_, i) => r[i] ?? '')))].join('\n');
}

export function fmtRate(n: number | undefined): string {
  if (n === undefined || !Number.isFinite(n)) return '–';
  if (n >= 100) return n.toFixed(0);
  if (n >= 10) return n.toFixed(1);
  return n.toFixed(2);
}

export function fmtMs(n: number | undefined): string {
  if (n === undefined || !Number.isFinite(n)) return '–';
  return n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2);
}

export function fmtMiB(bytes: number | undefined): string {
  return bytes === undefined ? '–' : `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
}

export function fmtRatio(n: number | undefined): string {
  return n === undefined || !Number.isFinite(n) ? '–' : n.toFixed(2);
}
