// Host entries as the configuration writes them (WEBHOOK_ALLOWED_PRIVATE_HOSTS: `host` or `host:port`) and hosts
// as URLs write them. Read by the configuration (config.ts) and by the callback URL policy (url-safety.ts).
import net from "node:net";

/** A host as URLs write it (lower case, IPv4 normalised, IPv6 bracketed and compressed); throws if not a host. */
export function normaliseHost(host: string): string {
  const inBrackets = host.startsWith("[") && host.endsWith("]");
  const written = !inBrackets && net.isIP(host) === 6 ? `[${host}]` : host;
  let url: URL;
  try {
    url = new URL(`http://${written}/`);
  } catch {
    throw new Error(`"${host}" is not a host name or an IP address`);
  }
  if (url.username || url.password || url.port || url.pathname !== "/" || url.search || url.hash || !url.hostname) {
    throw new Error(`"${host}" is not a host name or an IP address`);
  }
  return url.hostname;
}

/** One WEBHOOK_ALLOWED_PRIVATE_HOSTS entry: `host` (every port) or `host:port` (that port only); host is a
 * name, an IPv4 address or an IPv6 address (in brackets when a port follows: `[::1]:9000`). Throws an
 * Error saying what is wrong. */
export function parseHostEntry(raw: string): { hostname: string; port?: number } {
  const entry = raw.trim();
  let host = entry;
  let portText: string | undefined;
  if (entry.startsWith("[")) {
    const end = entry.indexOf("]");
    if (end < 0) throw new Error(`"${raw}" lacks the closing ] of an IPv6 address`);
    host = entry.slice(0, end + 1);
    const rest = entry.slice(end + 1);
    if (rest !== "") {
      if (!rest.startsWith(":")) throw new Error(`"${raw}" is not host or host:port`);
      portText = rest.slice(1);
    }
  } else if (entry.indexOf(":") !== entry.lastIndexOf(":")) {
    host = entry; // an IPv6 address without brackets (and so without a port)
  } else if (entry.includes(":")) {
    [host, portText] = entry.split(":");
  }
  let port: number | undefined;
  if (portText !== undefined) {
    port = /^\d{1,5}$/.test(portText) ? Number(portText) : Number.NaN;
    if (!(port >= 1 && port <= 65_535)) throw new Error(`"${raw}": the port must be a number from 1 to 65535`);
  }
  return { hostname: normaliseHost(host), port };
}
