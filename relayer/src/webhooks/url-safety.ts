// Callback URLs: what a subscription may point at, so that webhooks cannot be used to reach the
// relayer's own network (SSRF). Rules, checked when a subscription is saved and again on every attempt:
//
// - an absolute http(s) URL of at most 2048 characters, without user:password@ and without a #fragment;
// - https, or plain http only for hosts of WEBHOOK_ALLOWED_PRIVATE_HOSTS (local development);
// - the host must be a public address: an IP literal, or a name whose addresses (every one of them) are
//   public. Loopback, private (RFC 1918, unique-local), link-local (cloud metadata at 169.254.169.254),
//   carrier-grade NAT, multicast, reserved and documentation ranges, and IPv6 forms embedding such an
//   IPv4 address, are refused, as are single-label names and *.localhost, *.local, *.internal;
// - unless the URL's host is listed, as written, in WEBHOOK_ALLOWED_PRIVATE_HOSTS.
//
// At delivery the name is resolved again by the connection's own lookup (guardedLookup) and the socket
// connects to the address that was checked, so a name that re-resolves to a private address after it was
// saved (DNS rebinding) is refused too. Redirects are not followed.
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import net from "node:net";

export class UnsafeUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnsafeUrlError";
  }
}

export type UrlPolicy = { allowedPrivateHosts: readonly string[] };
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

const MAX_URL_LENGTH = 2048;

const blocked = new net.BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local, cloud metadata
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // 6to4 relay anycast
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(network, prefix, "ipv4");
}
for (const [network, prefix] of [
  ["::", 128], // unspecified
  ["::1", 128], // loopback
  ["100::", 64], // discard
  ["2001:db8::", 32], // documentation
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8], // multicast
] as const) {
  blocked.addSubnet(network, prefix, "ipv6");
}

/** The 32-bit IPv4 address embedded in an IPv6 address that carries one (mapped, compatible, NAT64,
 * 6to4), as a dotted string; undefined otherwise. */
function embeddedIpv4(address: string): string | undefined {
  const groups = expandIpv6(address);
  if (!groups) return undefined;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zero = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  if (zero(0, 5) && groups[5] === 0xffff) return v4(groups[6], groups[7]); // ::ffff:a.b.c.d
  if (zero(0, 6)) return v4(groups[6], groups[7]); // ::a.b.c.d (deprecated compatible form)
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zero(2, 6)) return v4(groups[6], groups[7]); // 64:ff9b::/96
  if (groups[0] === 0x2002) return v4(groups[1], groups[2]); // 6to4
  return undefined;
}

function expandIpv6(address: string): number[] | undefined {
  let text = address.toLowerCase().split("%")[0];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const parts = dotted[1].split(".").map(Number);
    text = `${text.slice(0, -dotted[1].length)}${((parts[0] << 8) | parts[1]).toString(16)}:${((parts[2] << 8) | parts[3]).toString(16)}`;
  }
  const [head, tail] = text.split("::");
  const parse = (s: string | undefined) => (s ? s.split(":").map((g) => Number.parseInt(g, 16)) : []);
  const left = parse(head);
  const right = text.includes("::") ? parse(tail) : [];
  const fill = 8 - left.length - right.length;
  if (fill < 0 || (!text.includes("::") && fill !== 0)) return undefined;
  const groups = [...left, ...Array(fill).fill(0), ...right];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

/** Whether an IP address is a public (globally routable unicast) address. */
export function isPublicAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return !blocked.check(address, "ipv4");
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    if (v4 !== undefined) return isPublicAddress(v4);
    return !blocked.check(address, "ipv6");
  }
  return false;
}

const unbracket = (host: string) => host.replace(/^\[(.*)\]$/, "$1").toLowerCase();

/** Whether the URL's host is listed in the allowlist (as written: a name or an IP literal). */
export function isAllowlisted(hostname: string, policy: UrlPolicy): boolean {
  const host = unbracket(hostname);
  return policy.allowedPrivateHosts.some((entry) => unbracket(entry) === host);
}

/** Checks the form of a callback URL (no DNS); returns the parsed URL or throws UnsafeUrlError. */
export function parseCallbackUrl(raw: string, policy: UrlPolicy): URL {
  if (raw.length > MAX_URL_LENGTH) throw new UnsafeUrlError(`the URL is longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeUrlError("not an absolute URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new UnsafeUrlError("the URL must be https");
  if (url.username || url.password) throw new UnsafeUrlError("the URL must not contain credentials");
  if (url.hash) throw new UnsafeUrlError("the URL must not contain a #fragment");
  const allowlisted = isAllowlisted(url.hostname, policy);
  if (url.protocol === "http:" && !allowlisted) throw new UnsafeUrlError("the URL must be https");
  if (allowlisted) return url;
  const host = unbracket(url.hostname);
  if (net.isIP(host)) {
    if (!isPublicAddress(host)) throw new UnsafeUrlError(`${host} is not a public address`);
    return url;
  }
  if (!host.includes(".") || /\.(localhost|local|internal|localdomain|home\.arpa)\.?$/.test(host) || host === "localhost") {
    throw new UnsafeUrlError(`${host} is not a public host name`);
  }
  return url;
}

export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  });

/** Resolves the URL's host and checks every address; returns the addresses (the allowlist skips the
 * address check). Throws UnsafeUrlError. */
export async function resolveCallbackHost(url: URL, policy: UrlPolicy, resolver: Resolver = systemResolver): Promise<LookupAddress[]> {
  const host = unbracket(url.hostname);
  const allowlisted = isAllowlisted(url.hostname, policy);
  let addresses: LookupAddress[];
  if (net.isIP(host)) addresses = [{ address: host, family: net.isIP(host) }];
  else {
    try {
      addresses = await resolver(host);
    } catch (error) {
      throw new UnsafeUrlError(`${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
  }
  if (addresses.length === 0) throw new UnsafeUrlError(`${host} has no addresses`);
  if (!allowlisted) {
    const bad = addresses.find((a) => !isPublicAddress(a.address));
    if (bad) throw new UnsafeUrlError(`${host} resolves to ${bad.address}, which is not a public address`);
  }
  return addresses;
}

/** The full check of a callback URL: its form, then its addresses. */
export async function checkCallbackUrl(raw: string, policy: UrlPolicy, resolver?: Resolver): Promise<URL> {
  const url = parseCallbackUrl(raw, policy);
  await resolveCallbackHost(url, policy, resolver);
  return url;
}

/** A `lookup` for http(s).request that resolves the host, refuses it unless every address is allowed,
 * and hands the socket only checked addresses. `allowlisted` is decided from the URL's host. */
export function guardedLookup(allowlisted: boolean, resolver: Resolver = systemResolver): net.LookupFunction {
  return ((hostname: string, options: { all?: boolean; family?: number }, callback: (...args: unknown[]) => void) => {
    resolver(hostname)
      .then((addresses) => {
        if (addresses.length === 0) throw new UnsafeUrlError(`${hostname} has no addresses`);
        if (!allowlisted) {
          const bad = addresses.find((a) => !isPublicAddress(a.address));
          if (bad) throw new UnsafeUrlError(`${hostname} resolves to ${bad.address}, which is not a public address`);
        }
        const wanted = options?.family === 4 || options?.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
        if (wanted.length === 0) throw new UnsafeUrlError(`${hostname} has no IPv${options.family} address`);
        if (options?.all) callback(null, wanted);
        else callback(null, wanted[0].address, wanted[0].family);
      })
      .catch((error: Error) => callback(error));
  }) as unknown as net.LookupFunction;
}
