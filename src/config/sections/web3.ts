// Wallet sign-in (EXTERNAL_WEB3_*); validity in seconds.
import { bool, withDefault, setting } from '../setting.ts';
import { parseChainIds, seconds } from '../values.ts';

export const web3 = {
  web3: {
    solana: {
      enabled: setting(
        'EXTERNAL_WEB3_SOLANA_ENABLED',
        bool(false),
        'false',
        'Sign in with Solana (POST /token?grant_type=web3, chain solana).',
      ),
      maxValidity: setting(
        'EXTERNAL_WEB3_SOLANA_MAXIMUM_VALIDITY_DURATION',
        withDefault(seconds, 600),
        '10m',
        'How long after (or before) its Issued At a signed Solana message is accepted.',
      ),
    },
    ethereum: {
      enabled: setting(
        'EXTERNAL_WEB3_ETHEREUM_ENABLED',
        bool(false),
        'false',
        'Sign in with Ethereum (POST /token?grant_type=web3, chain ethereum, EIP-4361 messages).',
      ),
      maxValidity: setting(
        'EXTERNAL_WEB3_ETHEREUM_MAXIMUM_VALIDITY_DURATION',
        withDefault(seconds, 600),
        '10m',
        'How long after (or before) its Issued At a signed Ethereum message is accepted.',
      ),
      chainIds: setting(
        'EXTERNAL_WEB3_ETHEREUM_CHAIN_IDS',
        withDefault(parseChainIds, []),
        '',
        "EIP-155 chain ids (the message's Chain ID) a signed Ethereum message may name, comma-separated (e.g. 1,8453); empty: any. authsvc only.",
      ),
    },
  },
};
