// Which provider module serves each name of EXTERNAL_<P>_*; one line per provider.
import type { ProviderName } from '../config/kinds.ts';
import { appleProvider } from './apple.ts';
import { azureProvider } from './azure.ts';
import { bitbucketProvider } from './bitbucket.ts';
import { discordProvider } from './discord.ts';
import { facebookProvider } from './facebook.ts';
import { figmaProvider } from './figma.ts';
import { githubProvider } from './github.ts';
import { gitlabProvider } from './gitlab.ts';
import { googleProvider } from './google.ts';
import { keycloakProvider } from './keycloak.ts';
import { linkedinProvider } from './linkedin.ts';
import { notionProvider } from './notion.ts';
import type { OAuthProvider, ProviderSettings } from './provider.ts';
import { slackProvider } from './slack.ts';
import { spotifyProvider } from './spotify.ts';
import { twitchProvider } from './twitch.ts';
import { twitterProvider } from './twitter.ts';
import { workosProvider } from './workos.ts';

export const OAUTH_PROVIDERS: Record<ProviderName, (s: ProviderSettings) => OAuthProvider> = {
  apple: appleProvider,
  azure: azureProvider,
  bitbucket: bitbucketProvider,
  discord: discordProvider,
  facebook: facebookProvider,
  figma: figmaProvider,
  github: githubProvider,
  gitlab: gitlabProvider,
  google: googleProvider,
  keycloak: keycloakProvider,
  linkedin: linkedinProvider,
  notion: notionProvider,
  slack: slackProvider,
  spotify: spotifyProvider,
  twitch: twitchProvider,
  twitter: twitterProvider,
  workos: workosProvider,
};
