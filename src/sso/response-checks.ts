// The checks on a verified SAML Response (GoTrue: crewjam's ParseResponse / validateAssertion,
// with its 180 s clock skew and 90 s issue delay). The records come from the signed XML only
// (saml-xml.ts). Each failure names its reason; GoTrue answers them all with 400
// validation_failed "SAML Assertion is not valid".
import type { SamlResponse } from '../crypto/saml-xml.ts';

export const MAX_CLOCK_SKEW_MS = 180_000;
const MAX_ISSUE_DELAY_MS = 90_000;
const SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';

export interface Expected {
  idpEntityId: string;
  spEntityId: string;
  acsUrl: string;
  /** The AuthnRequest ID of an SP-initiated flow; undefined for an IdP-initiated one. */
  requestId?: string;
  now: Date;
}

export class InvalidAssertion extends Error {
  override name = 'InvalidAssertion';
}

/** Throws InvalidAssertion; returns when it may expire (the time its id must be remembered until). */
export function checkResponse(r: SamlResponse, e: Expected): Date {
  const bad = (why: string): never => {
    throw new InvalidAssertion(why);
  };
  const now = e.now.getTime();
  const a = r.assertion;
  if (r.status !== SUCCESS) bad('the IdP did not report success');
  if (r.destination !== undefined && r.destination !== e.acsUrl) bad('Destination does not match the ACS URL');
  if (r.issuer !== undefined && r.issuer !== e.idpEntityId) bad('the Response was issued by another IdP');
  if (a.issuer !== e.idpEntityId) bad('the Assertion was issued by another IdP');
  // SP-initiated: the answer to this relay state's request and no other. IdP-initiated: an
  // answer to a request must come back with its relay state (stricter than GoTrue).
  if (r.inResponseTo !== e.requestId) bad('InResponseTo does not match the request');
  for (const t of [r.issueInstant, a.issueInstant]) {
    if (!t) continue;
    if (t.getTime() > now + MAX_CLOCK_SKEW_MS) bad('IssueInstant is in the future');
    if (now - t.getTime() > MAX_ISSUE_DELAY_MS + MAX_CLOCK_SKEW_MS) bad('IssueInstant is too old');
  }
  if (!a.id) bad('the Assertion has no ID');
  if (a.notBefore && a.notBefore.getTime() > now + MAX_CLOCK_SKEW_MS) bad('the Assertion is not valid yet (NotBefore)');
  if (a.notOnOrAfter && now >= a.notOnOrAfter.getTime() + MAX_CLOCK_SKEW_MS)
    bad('the Assertion has expired (NotOnOrAfter)');
  // Stricter than crewjam, which accepts an assertion naming no audience: one must name us.
  if (a.audienceRestrictions.length === 0) bad('the Assertion names no Audience');
  if (a.audienceRestrictions.some((list) => !list.includes(e.spEntityId)))
    bad('the Assertion is meant for another Audience');
  const bearer = a.subjectConfirmations.filter((c) => c.method === BEARER);
  if (bearer.length === 0) bad('the Assertion has no bearer SubjectConfirmation');
  const usable = bearer.find(
    (c) =>
      c.recipient === e.acsUrl &&
      (!c.notBefore || c.notBefore.getTime() <= now + MAX_CLOCK_SKEW_MS) &&
      !!c.notOnOrAfter &&
      now < c.notOnOrAfter.getTime() + MAX_CLOCK_SKEW_MS &&
      (c.inResponseTo === undefined || (e.requestId !== undefined && c.inResponseTo === e.requestId)),
  );
  if (!usable) {
    if (!bearer.some((c) => c.recipient === e.acsUrl)) bad('SubjectConfirmation Recipient does not match the ACS URL');
    if (!bearer.some((c) => c.notOnOrAfter && now < c.notOnOrAfter.getTime() + MAX_CLOCK_SKEW_MS))
      bad('the SubjectConfirmation has expired (NotOnOrAfter)');
    bad('SubjectConfirmation InResponseTo does not match the request');
  }
  const ends = [a.notOnOrAfter, usable!.notOnOrAfter].filter((d): d is Date => d !== undefined).map((d) => d.getTime());
  return new Date(Math.max(...ends) + MAX_CLOCK_SKEW_MS);
}
