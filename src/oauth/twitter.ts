// Twitter over OAuth 1.0a, as GoTrue's provider/twitter.go does it (github.com/mrjones/oauth,
// HMAC-SHA1): /authorize fetches a request token whose callback carries the state and sends the
// browser to /oauth/authenticate; the callback's oauth_token and oauth_verifier buy the access
// token (GoTrue keeps no request-token secret, so that request is signed without one); the user
// comes from verify_credentials with include_email. The access token is the provider_token.
import { obj, str } from './claims.ts';
import { newNonce, oauth1Header } from './oauth1.ts';
import { bodyText, chooseHost, send } from './oauth2.ts';
import type { OAuthContext, OAuthProvider, ProviderSettings } from './provider.ts';
import { ProviderError } from './provider-error.ts';

export function twitterProvider(s: ProviderSettings): OAuthProvider {
  const host = chooseHost(s.url, 'api.twitter.com');
  const userInfoUrl = `${host}/1.1/account/verify_credentials.json`;
  const consumer = { consumerKey: s.clientIds[0] ?? '', consumerSecret: s.secret };

  async function signedGet(
    ctx: OAuthContext,
    url: string,
    what: string,
    sign: { token?: string; tokenSecret?: string; oauth?: Record<string, string>; query?: Record<string, string> },
  ) {
    const header = oauth1Header({
      method: 'GET',
      url,
      ...consumer,
      ...sign,
      now: ctx.now(),
      nonce: newNonce(ctx.randomBytes),
    });
    const qs = sign.query ? `?${new URLSearchParams(sign.query)}` : '';
    const res = await send(ctx, `${url}${qs}`, { method: 'GET', headers: { Authorization: header } }, what);
    const text = await bodyText(res, what);
    if (res.status < 200 || res.status >= 300) throw new ProviderError(`${what} answered HTTP ${res.status}`);
    return text;
  }

  return {
    name: 'twitter',
    oauth1: true,
    async authorizationUrl(ctx, a) {
      const body = new URLSearchParams(
        await signedGet(ctx, `${host}/oauth/request_token`, 'twitter request token', {
          oauth: { oauth_callback: `${s.redirectUri}?state=${a.state}` },
        }),
      );
      const token = body.get('oauth_token');
      if (!token) throw new ProviderError('twitter request token answer has no oauth_token');
      return `${host}/oauth/authenticate?oauth_token=${encodeURIComponent(token)}`;
    },
    async exchange(ctx, c) {
      const token = c.params.get('oauth_token') ?? '';
      const verifier = c.params.get('oauth_verifier') ?? '';
      const body = new URLSearchParams(
        await signedGet(ctx, `${host}/oauth/access_token`, 'twitter access token', {
          token,
          oauth: { oauth_verifier: verifier },
        }),
      );
      const accessToken = body.get('oauth_token');
      if (!accessToken) throw new ProviderError('twitter access token answer has no oauth_token');
      return { accessToken, raw: Object.fromEntries(body) };
    },
    async userInfo(ctx, token) {
      const text = await signedGet(ctx, userInfoUrl, 'twitter user info', {
        token: token.accessToken,
        tokenSecret: str(token.raw.oauth_token_secret),
        query: { include_email: 'true', include_entities: 'false', skip_status: 'true' },
      });
      let u: Record<string, unknown> = {};
      try {
        u = obj(JSON.parse(text));
      } catch {
        // GoTrue ignores a body it cannot decode and signs in an empty profile; the email check then refuses it.
      }
      const email = str(u.email);
      const id = str(u.id_str);
      const avatar = str(u.profile_image_url_https);
      return {
        emails: email ? [{ email, verified: true, primary: true }] : [],
        claims: {
          iss: userInfoUrl,
          sub: id,
          name: str(u.name),
          picture: avatar,
          preferred_username: str(u.screen_name),
          user_name: str(u.screen_name),
          full_name: str(u.name),
          avatar_url: avatar,
          provider_id: id,
        },
      };
    },
  };
}
