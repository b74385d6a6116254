// Callback URLs: what a subscription may point at, so that webhooks cannot be used to reach the
// relayer's own network (SSRF). Rules, checked when a subscription is saved and again on every attempt:
//
// - an absolute http(s) URL of at most 2048 characters, without user:password@ and without a #fragment;
// - https, or plain http only for hosts of WEBHOOK_ALLOWED_PRIVATE_HOSTS (local development);
// - the host must be a public address: an IP literal, or a name whose addresses (every one of them) are
//   public. Public means global unicast: IPv4 outside the IANA special-purpose ranges (loopback, private,
//   link-local with the cloud metadata at 169.254.169.254, carrier-grade NAT, 192.0.0.0/24, documentation,
//   benchmarking, 6to4 relay, multicast, reserved, broadcast, "this network"), and IPv6 inside 2000::/3 but
//   outside 2001::/23 (Teredo, benchmarking, ORCHID and other protocol assignments), 2001:db8::/32 and
//   3fff::/20 (documentation). Everything outside 2000::/3 is refused (unique-local, link-local,
//   site-local, multicast, discard, IPv4-compatible ::a.b.c.d, SIIT ::ffff:0:a.b.c.d, the local-use
//   translation prefix 64:ff9b:1::/48, ...), except the two forms that stand for an IPv4 address, the
//   mapped ::ffff:a.b.c.d and NAT64 64:ff9b::a.b.c.d, which are as public as that IPv4 address; 6to4
//   (2002::/16) is as public as its embedded IPv4 address too. Names must have a dot and must not end in
//   .localhost, .local, .internal, .localdomain or .home.arpa. Odd IPv4 spellings (2130706433, 0x7f.1,
//   127.1, 0177.0.0.1) are normalised by URL parsing before any check;
// - unless the URL's host is listed in WEBHOOK_ALLOWED_PRIVATE_HOSTS: an entry `host` allows the host on
//   every port, an entry `host:port` (`[v6]:port`) on that port only (the port of a URL without one is
//   80 for http, 443 for https);
// - whatever the allowlist says, never one of the relayer's own endpoints (`ownEndpoints`: its HOST:PORT,
//   PUBLIC_BASE_URL, RPC_URL, INDEXER_URL, DEVICE_CLOUD_URL and the database of DATABASE_URL): the same
//   host and port, or an address of it with that port. Loopback, unspecified (0.0.0.0, ::) and this
//   machine's interface addresses count as one host. An endpoint's name is compared as written and, when
//   its addresses are not public, by address (a public address may be shared by many sites, e.g. a CDN).
//
// At delivery the name is resolved again by the connection's own lookup (guardedLookup) and the socket
// connects to the address that was checked, so a name that re-resolves to a private address or to the
// relayer's own services after it was saved (DNS rebinding) is refused too. Redirects are not followed.
// Lookups go through bounded-resolver.ts: a few at a time, each caller waiting at most 5 s.
import type { LookupAddress } from "node:dns";
import net from "node:net";
import os from "node:os";
import type { Config } from "../config.ts";
import { LookupTimeoutError, type Resolver, systemResolver } from "./bounded-resolver.ts";
import { normaliseHost, parseHostEntry } from "./host-entry.ts";

export class UnsafeUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnsafeUrlError";
  }
}

/** A host and port of the relayer's own stack; `hostname` as URLs write it (lower case, IPv6 in brackets). */
export type Endpoint = { hostname: string; port: number };

export type UrlPolicy = {
  /** WEBHOOK_ALLOWED_PRIVATE_HOSTS: `host` or `host:port` entries (see parseHostEntry). */
  allowedPrivateHosts: readonly string[];
  /** The relayer's own endpoints: refused whatever the allowlist says (see serviceEndpoints). */
  ownEndpoints?: readonly Endpoint[];
};

const MAX_URL_LENGTH = 2048;

/** The setting that lets a callback reach a private host, or use plain http: named by the refusals it lifts. */
const ALLOWLIST = "WEBHOOK_ALLOWED_PRIVATE_HOSTS";

/** The end of a refusal the allowlist would lift: `hostPort` as a URL writes it (IPv6 in brackets). */
function notAllowlisted(hostPort: string): string {
  return `${hostPort} is not in ${ALLOWLIST} (an entry \`host\` allows the host on every port, \`host:port\` on that port only)`;
}

const blockedV4 = new net.BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local, cloud metadata
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments (DS-Lite, NAT64 discovery, ...)
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // 6to4 relay anycast (deprecated)
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, and 255.255.255.255 broadcast
] as const) {
  blockedV4.addSubnet(network, prefix, "ipv4");
}

/** Global unicast IPv6: 2000::/3 (everything else is special-purpose, reserved or unallocated). */
const globalV6 = new net.BlockList();
globalV6.addSubnet("2000::", 3, "ipv6");
const blockedV6 = new net.BlockList();
for (const [network, prefix] of [
  ["2001::", 23], // IETF protocol assignments: Teredo 2001::/32, benchmarking, ORCHID(v2), AMT, AS112, DRIP
  ["2001:db8::", 32], // documentation
  ["3fff::", 20], // documentation
] as const) {
  blockedV6.addSubnet(network, prefix, "ipv6");
}

/** The eight 16-bit groups of an IPv6 address (no zone id), or undefined. */
function ipv6Groups(address: string): number[] | undefined {
  if (net.isIP(address) !== 6 || address.includes("%")) return undefined;
  let text = address.toLowerCase();
  const lastColon = text.lastIndexOf(":");
  const tail = text.slice(lastColon + 1);
  if (tail.includes(".")) {
    if (net.isIP(tail) !== 4) return undefined;
    const [a, b, c, d] = tail.split(".").map(Number);
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const parse = (s: string) => (s ? s.split(":").map((g) => Number.parseInt(g, 16)) : []);
  const left = parse(halves[0]);
  const right = halves.length === 2 ? parse(halves[1]) : [];
  const fill = 8 - left.length - right.length;
  if (fill < 0 || (halves.length === 1 && fill !== 0)) return undefined;
  const groups = [...left, ...Array<number>(fill).fill(0), ...right];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

const dotted = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
const allZero = (groups: number[], from: number, to: number) => groups.slice(from, to).every((g) => g === 0);

/** The IPv4 address an IPv6 address stands for or carries to: IPv4-mapped ::ffff:a.b.c.d, NAT64
 * 64:ff9b::a.b.c.d and 6to4 2002:AABB:CCDD::/48. */
function translatedIpv4(groups: number[]): string | undefined {
  if (allZero(groups, 0, 5) && groups[5] === 0xffff) return dotted(groups[6], groups[7]);
  if (groups[0] === 0x64 && groups[1] === 0xff9b && allZero(groups, 2, 6)) return dotted(groups[6], groups[7]);
  if (groups[0] === 0x2002) return dotted(groups[1], groups[2]);
  return undefined;
}

/** Whether an IP address is a public (globally routable unicast) address. */
export function isPublicAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return !blockedV4.check(address, "ipv4");
  if (family !== 6) return false;
  const groups = ipv6Groups(address);
  if (!groups) return false;
  const v4 = translatedIpv4(groups);
  if (v4 !== undefined) return isPublicAddress(v4);
  const full = groups.map((g) => g.toString(16)).join(":");
  return globalV6.check(full, "ipv6") && !blockedV6.check(full, "ipv6");
}

/** One comparable form of an IP address (IPv4-mapped IPv6 as its IPv4 address); undefined if not one. */
function canonicalAddress(address: string): string | undefined {
  const bare = unbracket(address);
  if (net.isIP(bare) === 4) return bare;
  const groups = ipv6Groups(bare);
  if (!groups) return undefined;
  if (allZero(groups, 0, 5) && groups[5] === 0xffff) return dotted(groups[6], groups[7]);
  return groups.map((g) => g.toString(16)).join(":");
}

let interfaces: { until: number; addresses: Set<string> } | undefined;
/** This machine's interface addresses (re-read every 10 s). */
function interfaceAddresses(): Set<string> {
  if (!interfaces || interfaces.until < Date.now()) {
    const addresses = new Set<string>();
    for (const list of Object.values(os.networkInterfaces())) {
      for (const info of list ?? []) {
        const canonical = canonicalAddress(info.address);
        if (canonical) addresses.add(canonical);
      }
    }
    interfaces = { until: Date.now() + 10_000, addresses };
  }
  return interfaces.addresses;
}

/** Whether a connection to the address reaches this machine: loopback, unspecified, or an own interface. */
function isThisMachine(address: string): boolean {
  const canonical = canonicalAddress(address);
  if (canonical === undefined) return false;
  if (net.isIP(canonical) === 4 && (canonical.startsWith("127.") || canonical === "0.0.0.0")) return true;
  if (canonical === "0:0:0:0:0:0:0:1" || canonical === "0:0:0:0:0:0:0:0") return true;
  return interfaceAddresses().has(canonical);
}

/** Whether two addresses are the same host (equal, or both this machine). */
function sameHost(a: string, b: string): boolean {
  const x = canonicalAddress(a);
  return x !== undefined && (x === canonicalAddress(b) || (isThisMachine(a) && isThisMachine(b)));
}

const unbracket = (host: string) => (host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host).toLowerCase();
const isLocalhostName = (hostname: string) => hostname === "localhost" || hostname.endsWith(".localhost");
const bracketed = (address: string) => (net.isIP(address) === 6 ? `[${address}]` : address);

function defaultPort(protocol: string): number | undefined {
  if (protocol === "http:" || protocol === "ws:") return 80;
  if (protocol === "https:" || protocol === "wss:") return 443;
  return undefined;
}

/** The port a connection to the URL uses. */
function portOf(url: URL): number {
  return url.port ? Number(url.port) : (defaultPort(url.protocol) ?? 0);
}

/** host:port of a URL, with the scheme's default port written out ("localhost:443"). */
function hostPortOf(url: URL): string {
  return `${url.hostname}:${portOf(url)}`;
}

/** Whether the URL's host (as written: a name or an IP literal) and port are in the allowlist. */
export function isAllowlisted(url: URL, policy: UrlPolicy): boolean {
  const port = portOf(url);
  return policy.allowedPrivateHosts.some((raw) => {
    let entry: ReturnType<typeof parseHostEntry>;
    try {
      entry = parseHostEntry(raw);
    } catch {
      return false;
    }
    return entry.hostname === url.hostname && (entry.port === undefined || entry.port === port);
  });
}

function ownEndpointError(host: string, port: number, address?: string): UnsafeUrlError {
  const what = address ? `${host} resolves to ${address}, and ${bracketed(address)}:${port}` : `${host}:${port}`;
  return new UnsafeUrlError(`${what} is an endpoint of the payment service itself; webhooks are never delivered to it`);
}

/** The own endpoint the URL names (same host as written, or both this machine by name or literal). */
function ownEndpointByName(url: URL, policy: UrlPolicy): Endpoint | undefined {
  const port = portOf(url);
  const local = (hostname: string) => isLocalhostName(hostname) || isThisMachine(hostname);
  return policy.ownEndpoints?.find((e) => e.port === port && (e.hostname === url.hostname || (local(e.hostname) && local(url.hostname))));
}

const endpointAddressCache = new WeakMap<Resolver, Map<string, { until: number; addresses: string[] }>>();
const ENDPOINT_CACHE_MS = 30_000;

/** An own endpoint's addresses that identify it: its literal, loopback for localhost, or its name's
 * addresses (cached 30 s) that are not public or are this machine's. */
async function identifyingAddresses(endpoint: Endpoint, resolver: Resolver): Promise<string[]> {
  const host = unbracket(endpoint.hostname);
  if (net.isIP(host)) return [host];
  if (isLocalhostName(host)) return ["127.0.0.1", "::1"];
  let cache = endpointAddressCache.get(resolver);
  if (!cache) endpointAddressCache.set(resolver, (cache = new Map()));
  const cached = cache.get(host);
  if (cached && cached.until > Date.now()) return cached.addresses;
  let addresses: string[];
  try {
    addresses = (await resolver(host)).map((a) => a.address).filter((a) => !isPublicAddress(a) || isThisMachine(a));
  } catch (error) {
    // A name that did not answer in time may still be this endpoint's: the check fails closed, uncached (a name
    // that does not exist has no address a callback could share).
    if (error instanceof LookupTimeoutError) {
      throw new UnsafeUrlError(`${host}, one of the relayer's own endpoints, did not resolve in time to be told apart`);
    }
    addresses = [];
  }
  cache.set(host, { until: Date.now() + ENDPOINT_CACHE_MS, addresses });
  return addresses;
}

/** Throws UnsafeUrlError unless the addresses a callback host resolved to may be connected to on `port`:
 * all public (unless the URL is allowlisted), and none an own endpoint's. */
export async function checkAddresses(
  host: string,
  addresses: readonly LookupAddress[],
  port: number,
  allowlisted: boolean,
  policy: UrlPolicy,
  resolver: Resolver = systemResolver,
): Promise<void> {
  if (addresses.length === 0) throw new UnsafeUrlError(`${host} has no addresses`);
  if (!allowlisted) {
    const bad = addresses.find((a) => !isPublicAddress(a.address));
    if (bad) {
      throw new UnsafeUrlError(
        `${host} resolves to ${bad.address}, which is not a public address; ${notAllowlisted(`${bracketed(host)}:${port}`)}`,
      );
    }
  }
  for (const endpoint of policy.ownEndpoints ?? []) {
    if (endpoint.port !== port) continue;
    for (const own of await identifyingAddresses(endpoint, resolver)) {
      const hit = addresses.find((a) => sameHost(a.address, own));
      if (hit) throw net.isIP(host) ? ownEndpointError(bracketed(host), port) : ownEndpointError(host, port, hit.address);
    }
  }
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
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new UnsafeUrlError(`the URL must be https (or http to a host of ${ALLOWLIST})`);
  }
  if (url.username || url.password) throw new UnsafeUrlError("the URL must not contain credentials");
  if (url.hash) throw new UnsafeUrlError("the URL must not contain a #fragment");
  const allowlisted = isAllowlisted(url, policy);
  if (url.protocol === "http:" && !allowlisted) {
    throw new UnsafeUrlError(`the URL must be https: plain http is only for hosts of ${ALLOWLIST}; ${notAllowlisted(hostPortOf(url))}`);
  }
  if (ownEndpointByName(url, policy)) throw ownEndpointError(url.hostname, portOf(url));
  if (allowlisted) return url;
  const host = unbracket(url.hostname);
  if (net.isIP(host)) {
    if (!isPublicAddress(host)) throw new UnsafeUrlError(`${host} is not a public address; ${notAllowlisted(hostPortOf(url))}`);
    return url;
  }
  const name = host.endsWith(".") ? host.slice(0, -1) : host;
  const lastLabel = name.slice(name.lastIndexOf(".") + 1);
  const localSuffix = [".localhost", ".local", ".internal", ".localdomain", ".home.arpa"].some((suffix) => name.endsWith(suffix));
  if (!name.includes(".") || !lastLabel || localSuffix || name === "localhost") {
    throw new UnsafeUrlError(`${host} is not a public host name; ${notAllowlisted(hostPortOf(url))}`);
  }
  return url;
}

/** Resolves the URL's host and checks every address (the allowlist skips the public-address check, never
 * the own-endpoint check); returns the addresses. Throws UnsafeUrlError. */
export async function resolveCallbackHost(url: URL, policy: UrlPolicy, resolver: Resolver = systemResolver): Promise<LookupAddress[]> {
  const host = unbracket(url.hostname);
  let addresses: LookupAddress[];
  if (net.isIP(host)) addresses = [{ address: host, family: net.isIP(host) }];
  else {
    try {
      addresses = await resolver(host);
    } catch (error) {
      throw new UnsafeUrlError(`${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
  }
  await checkAddresses(host, addresses, portOf(url), isAllowlisted(url, policy), policy, resolver);
  return addresses;
}

/** The full check of a callback URL: its form, then its addresses. */
export async function checkCallbackUrl(raw: string, policy: UrlPolicy, resolver?: Resolver): Promise<URL> {
  const url = parseCallbackUrl(raw, policy);
  await resolveCallbackHost(url, policy, resolver);
  return url;
}

/** A `lookup` for http(s).request to `url` (a name, not an IP literal): resolves the host, refuses it
 * unless every address passes checkAddresses, and hands the socket only checked addresses. */
export function guardedLookup(url: URL, policy: UrlPolicy, resolver: Resolver = systemResolver): net.LookupFunction {
  const port = portOf(url);
  const allowlisted = isAllowlisted(url, policy);
  return ((hostname: string, options: { all?: boolean; family?: number }, callback: (...args: unknown[]) => void) => {
    resolver(hostname)
      .then(async (addresses) => {
        await checkAddresses(hostname, addresses, port, allowlisted, policy, resolver);
        const wanted = options?.family === 4 || options?.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
        if (wanted.length === 0) throw new UnsafeUrlError(`${hostname} has no IPv${options.family} address`);
        if (options?.all) callback(null, wanted);
        else callback(null, wanted[0].address, wanted[0].family);
      })
      .catch((error: Error) => callback(error));
  }) as unknown as net.LookupFunction;
}

/** The endpoint of a service URL (its host and port), or undefined for a URL without a known port. */
function endpointOfUrl(raw: string | undefined): Endpoint | undefined {
  if (!raw) return undefined;
  try {
    const url = new URL(raw);
    const port = url.port ? Number(url.port) : defaultPort(url.protocol);
    return url.hostname && port ? { hostname: normaliseHost(url.hostname), port } : undefined;
  } catch {
    return undefined;
  }
}

/** The database servers of a PostgreSQL connection string: the hosts of its authority (libpq allows a
 * comma-separated list) and of a `host` parameter, default port 5432; `localhost` when none is named.
 * Unix-socket hosts (a path) are skipped. */
export function databaseEndpoints(raw: string): Endpoint[] {
  const schemeEnd = raw.indexOf("://");
  if (schemeEnd < 0) return [];
  const rest = raw.slice(schemeEnd + 3).split("#")[0];
  const queryStart = rest.indexOf("?");
  const beforeQuery = queryStart < 0 ? rest : rest.slice(0, queryStart);
  const authority = beforeQuery.split("/")[0];
  const hosts = authority.slice(authority.lastIndexOf("@") + 1);
  const query = new URLSearchParams(queryStart < 0 ? "" : rest.slice(queryStart + 1));
  const defaultDbPort = Number(query.get("port")) || 5432;
  const named = hosts.split(",").filter(Boolean);
  for (const host of (query.get("host") ?? "").split(",")) if (host && !host.startsWith("/")) named.push(host);
  if (named.length === 0 && !query.get("host")) named.push("localhost");
  const endpoints: Endpoint[] = [];
  for (const item of named) {
    try {
      const { hostname, port } = parseHostEntry(decodeURIComponent(item));
      endpoints.push({ hostname, port: port ?? defaultDbPort });
    } catch {
      // not a host: nothing to protect there
    }
  }
  return endpoints;
}

type EndpointConfig = Pick<Config, "HOST" | "PORT" | "publicBaseUrl" | "RPC_URL" | "INDEXER_URL" | "DEVICE_CLOUD_URL" | "DATABASE_URL">;

/** The relayer's own endpoints, never a webhook's target: HOST:PORT, PUBLIC_BASE_URL, RPC_URL,
 * INDEXER_URL, DEVICE_CLOUD_URL and the database of DATABASE_URL. */
export function serviceEndpoints(config: EndpointConfig): Endpoint[] {
  const endpoints: Endpoint[] = [];
  try {
    endpoints.push({ hostname: normaliseHost(config.HOST), port: config.PORT });
  } catch {
    // HOST is not a host name: the server could not listen on it either
  }
  for (const url of [
    config.publicBaseUrl,
    ...config.RPC_URL.split(",").map((u) => u.trim()),
    config.INDEXER_URL,
    config.DEVICE_CLOUD_URL,
  ]) {
    const endpoint = endpointOfUrl(url);
    if (endpoint) endpoints.push(endpoint);
  }
  if (config.DATABASE_URL) endpoints.push(...databaseEndpoints(config.DATABASE_URL));
  const seen = new Set<string>();
  return endpoints.filter((e) => !seen.has(`${e.hostname} ${e.port}`) && seen.add(`${e.hostname} ${e.port}`));
}

/** The callback URL policy of a relayer configuration. */
export function webhookUrlPolicy(config: EndpointConfig & Pick<Config, "WEBHOOK_ALLOWED_PRIVATE_HOSTS">): UrlPolicy {
  return { allowedPrivateHosts: config.WEBHOOK_ALLOWED_PRIVATE_HOSTS, ownEndpoints: serviceEndpoints(config) };
}
