// The SSRF guard's address classes (src/oauth/url-guard.ts addressRefusal): every form an address
// can be written in, including the ones SSRF guards usually miss (IPv4-mapped and -compatible
// IPv6, dotted tails, zone ids, brackets, uncompressed groups).
import { describe, expect, test } from 'vitest';
import { addressRefusal } from '../../src/oauth/url-guard.ts';

const LOOPBACK = 'URL cannot resolve to loopback addresses';
const PRIVATE = 'URL cannot resolve to private network addresses';
const LINK_LOCAL = 'URL cannot resolve to link-local addresses';
const MULTICAST = 'URL cannot resolve to multicast addresses';
const UNSPECIFIED = 'URL cannot resolve to unspecified addresses';

describe('addressRefusal', () => {
  test.each([
    ['127.0.0.1', LOOPBACK],
    ['127.255.255.254', LOOPBACK],
    ['10.0.0.1', PRIVATE],
    ['172.16.0.1', PRIVATE],
    ['172.31.255.255', PRIVATE],
    ['192.168.1.1', PRIVATE],
    ['100.64.0.1', PRIVATE],
    ['100.127.255.255', PRIVATE],
    ['169.254.169.254', LINK_LOCAL],
    ['224.0.0.1', MULTICAST],
    ['239.255.255.255', MULTICAST],
    ['0.0.0.0', UNSPECIFIED],
    ['0.1.2.3', UNSPECIFIED],
    ['::', UNSPECIFIED],
    ['[::]', UNSPECIFIED],
    ['0:0:0:0:0:0:0:0', UNSPECIFIED],
    ['::1', LOOPBACK],
    ['[::1]', LOOPBACK],
    ['0:0:0:0:0:0:0:1', LOOPBACK],
    ['::ffff:127.0.0.1', LOOPBACK],
    ['::ffff:7f00:1', LOOPBACK],
    ['0:0:0:0:0:ffff:7f00:0001', LOOPBACK],
    ['::ffff:10.0.0.1', PRIVATE],
    ['[::ffff:192.168.1.9]', PRIVATE],
    ['::ffff:a9fe:a9fe', LINK_LOCAL],
    ['::10.0.0.1', PRIVATE],
    ['fc00::1', PRIVATE],
    ['fd12:3456:789a::1', PRIVATE],
    ['FD00::1', PRIVATE],
    ['fe80::1', LINK_LOCAL],
    ['fe80::1%eth0', LINK_LOCAL],
    ['[fe80::abcd%25en0]', LINK_LOCAL],
    ['febf:ffff::1', LINK_LOCAL],
    ['ff02::1', MULTICAST],
    ['ff05::2', MULTICAST],
  ])('%s → refused: %s', (address, why) => {
    expect(addressRefusal(address)).toBe(why);
  });

  test.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.15.255.255',
    '172.32.0.1',
    '100.63.255.255',
    '100.128.0.1',
    '192.169.0.1',
    '2001:4860:4860::8888',
    '[2606:4700:4700::1111]',
    '::ffff:8.8.8.8',
    '2a00::1',
    'example.com',
    '',
    'not an address',
    '1.2.3',
    '256.1.1.1',
    ':::1',
  ])('%s → allowed (a public address, or not an address at all)', (address) => {
    expect(addressRefusal(address)).toBeUndefined();
  });
});
