// Text and attribute values written into XML by hand (metadata, AuthnRequest).
const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

export const xmlEscape = (s: string) => s.replace(/[&<>"']/g, (c) => ENTITIES[c]!);
