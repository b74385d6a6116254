// Who a request comes from, as far as limits are concerned: the client's address (the socket's peer, or the
// address a trusted reverse proxy forwarded: TRUST_PROXY), and the group it is counted in (an IPv4 address on
// its own, an IPv6 address with the rest of its /64: one host is usually handed a whole /64). Pure functions:
// the connection admission (connection-limits.ts), the rate limiter and the event-stream cap (middleware.ts)
// and the metrics route's loopback check all read the address from here.
import { BlockList, isIP, isIPv4 } from "node:net";

/** Headers a reverse proxy adds to name the client it forwards for. */
export const FORWARDING_HEADERS = ["forwarded", "x-forwarded-for", "x-real-ip"] as const;

/** The forwarding header TRUST_PROXY's proxies write (only that one is read: a proxy that appends to
 * X-Forwarded-For passes a client's own `Forwarded` through untouched, and the other way round). */
export type ForwardingHeader = "x-forwarded-for" | "forwarded";

/** The trusted proxies and the header they write. `trusted` undefined: no proxy is trusted, the socket's
 * peer is the client. */
export type ClientNetwork = { trusted: BlockList | undefined; header: ForwardingHeader };

export const DIRECT_CLIENTS: ClientNetwork = { trusted: undefined, header: "x-forwarded-for" };

/** At most this many forwarding hops are walked (a longer chain: the client is the address reached there). */
const MAX_HOPS = 32;

/** Named ranges TRUST_PROXY accepts besides addresses and CIDR blocks. A Map: names come from configuration. */
const NAMED_RANGES = new Map<string, ReadonlyArray<string>>([
  ["loopback", ["127.0.0.0/8", "::1/128"]],
  ["private", ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"]],
]);

/** `::ffff:192.0.2.1` (an IPv4 client of a dual-stack socket) is `192.0.2.1`; a zone id (`fe80::1%eth0`) is
 * dropped; IPv6 is lower-cased. */
export function normalizeAddress(address: string): string {
  const zone = address.indexOf("%");
  const bare = (zone >= 0 ? address.slice(0, zone) : address).toLowerCase();
  if (bare.startsWith("::ffff:") && isIPv4(bare.slice(7))) return bare.slice(7);
  return bare;
}

/** Whether the address is on the loopback interface (127.0.0.0/8, ::1). */
export function isLoopback(address: string): boolean {
  const a = normalizeAddress(address);
  return a === "::1" || (isIPv4(a) && a.startsWith("127."));
}

/** The eight 16-bit groups of a valid IPv6 address (an embedded IPv4 tail included). */
function ipv6Groups(address: string): number[] {
  let text = address;
  let tail: number[] = [];
  const lastColon = text.lastIndexOf(":");
  if (text.includes(".", lastColon)) {
    const [a, b, c, d] = text
      .slice(lastColon + 1)
      .split(".")
      .map(Number);
    tail = [(a << 8) | b, (c << 8) | d];
    text = text.slice(0, lastColon + 1);
    if (!text.endsWith("::")) text = text.slice(0, -1);
  }
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((g) => parseInt(g, 16)));
  const gap = text.indexOf("::");
  const left = parse(gap >= 0 ? text.slice(0, gap) : text);
  const right = gap >= 0 ? parse(text.slice(gap + 2)) : [];
  const fill = new Array<number>(Math.max(0, 8 - left.length - right.length - tail.length)).fill(0);
  return [...left, ...fill, ...right, ...tail];
}

/** The group an address is counted in: an IPv4 address itself; an IPv6 address's /64 (`2001:db8:1:2::/64`). */
export function addressGroup(address: string): string {
  const a = normalizeAddress(address);
  if (isIP(a) !== 6) return a;
  return `${ipv6Groups(a)
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(":")}::/64`;
}

/** Parses TRUST_PROXY: comma-separated addresses, CIDR blocks (`10.0.0.0/8`, `fd00::/8`) and the names
 * `loopback` and `private`. Throws with a message naming the bad entry. An empty list trusts no proxy. */
export function parseTrustedProxies(value: string): BlockList | undefined {
  const entries = value
    .split(",")
    .map((e) => e.trim().toLowerCase())
    .filter(Boolean);
  if (entries.length === 0) return undefined;
  const list = new BlockList();
  const add = (entry: string) => {
    const slash = entry.indexOf("/");
    const address = slash >= 0 ? entry.slice(0, slash) : entry;
    const family = isIP(address);
    if (family === 0) throw new Error(`"${entry}" is not an address, a CIDR block, "loopback" or "private"`);
    const type = family === 4 ? "ipv4" : "ipv6";
    const max = family === 4 ? 32 : 128;
    const prefix = slash >= 0 ? entry.slice(slash + 1) : String(max);
    if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) throw new Error(`"${entry}": the prefix length is 0 to ${max}`);
    list.addSubnet(address, Number(prefix), type);
  };
  for (const entry of entries) {
    const named = NAMED_RANGES.get(entry);
    if (named) named.forEach(add);
    else add(entry);
  }
  return list;
}

/** Whether `address` (normalized) is one of the trusted proxies. */
export function isTrustedProxy(network: ClientNetwork, address: string): boolean {
  if (!network.trusted) return false;
  const family = isIP(address);
  return family !== 0 && network.trusted.check(address, family === 4 ? "ipv4" : "ipv6");
}

/** One hop of a forwarding header as an address, or undefined when it is not one (`unknown`, an obfuscated
 * identifier, garbage). Ports are dropped: `192.0.2.1:4711`, `[2001:db8::1]:4711`. */
function hopAddress(raw: string): string | undefined {
  let text = raw.trim();
  if (text.startsWith('"') && text.endsWith('"') && text.length >= 2) text = text.slice(1, -1);
  if (text.startsWith("[")) {
    const close = text.indexOf("]");
    text = close > 0 ? text.slice(1, close) : "";
  } else if (text.indexOf(":") > 0 && text.indexOf(":") === text.lastIndexOf(":")) {
    text = text.slice(0, text.indexOf(":")); // IPv4 with a port
  }
  return isIP(text) ? normalizeAddress(text) : undefined;
}

/** The hops of a forwarding header, client first (as the proxies appended them). */
export function forwardedHops(header: ForwardingHeader, value: string): Array<string | undefined> {
  const elements = value.split(",");
  if (header === "x-forwarded-for") return elements.map(hopAddress);
  // RFC 7239: `for=192.0.2.60;proto=http, for="[2001:db8::1]:4711"`; an element without `for` names no hop.
  return elements.map((element) => {
    for (const pair of element.split(";")) {
      const eq = pair.indexOf("=");
      if (eq > 0 && pair.slice(0, eq).trim().toLowerCase() === "for") return hopAddress(pair.slice(eq + 1));
    }
    return undefined;
  });
}

/** The client's address: the socket's peer, unless that peer is a trusted proxy; then the forwarding header
 * is read from the right (the hop the nearest proxy appended), skipping trusted proxies: the first address
 * that is not one is the client. A hop that is not an address ends the walk at the last address reached; when
 * every hop is a trusted proxy, the left-most is the client. */
export function resolveClientAddress(network: ClientNetwork, peer: string, forwarded: string | undefined): string {
  let address = normalizeAddress(peer);
  if (!isTrustedProxy(network, address) || forwarded === undefined) return address;
  const hops = forwardedHops(network.header, forwarded);
  for (let i = hops.length - 1, walked = 0; i >= 0 && walked < MAX_HOPS; i--, walked++) {
    const hop = hops[i];
    if (hop === undefined) return address;
    address = hop;
    if (!isTrustedProxy(network, address)) return address;
  }
  return address;
}

/** The ClientNetwork of the configuration (TRUST_PROXY, TRUST_PROXY_HEADER). */
export function clientNetwork(config: { TRUST_PROXY: BlockList | undefined; TRUST_PROXY_HEADER: ForwardingHeader }): ClientNetwork {
  return { trusted: config.TRUST_PROXY, header: config.TRUST_PROXY_HEADER };
}
