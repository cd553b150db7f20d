// A template Go's parser would refuse: GoTrue then uses the built-in template of that kind.
export class TemplateSyntaxError extends Error {}
