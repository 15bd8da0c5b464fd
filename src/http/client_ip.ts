/**
 * The client's address, for a rate limit key, as the adapters (Hono,
 * Express, fetch) find it: the peer of the connection, or, behind proxies
 * the application names, the address the nearest untrusted hop was seen
 * at, read from `X-Forwarded-For` or `Forwarded` (RFC 7239). A header is
 * believed only as far as trusted proxies wrote it: what a client puts
 * there itself is further left and never read. IPv6 addresses are grouped
 * by a prefix (/56 by default), since one client is given a whole prefix
 * and could otherwise rotate addresses inside it. A connection over a Unix
 * socket has no address: it is a trusted proxy only when the operator says
 * so (`trustUnixSocket`), and a request whose address cannot be learned is
 * never keyed with all the others: it gets what `unknownClient` says, and
 * is counted.
 *
 * @module
 */

import { describe } from "../core/describe.ts";
import { formatIp, parseIp } from "../proto/address.ts";
import { type KeyOf, UNKNOWN_ADDRESS, UNKNOWN_CLIENT } from "./limiting.ts";

// Named here too: the resolver gives the one, the key functions the other.
export { UNKNOWN_ADDRESS, UNKNOWN_CLIENT };

/** How the client's address is found. */
export interface ClientIpOptions {
  /**
   * Which proxies to believe: how many sit in front of the server (`1`: the
   * peer is a proxy and the last hop it names is the client), or the
   * addresses and CIDR ranges of the proxies (`["10.0.0.0/8", "::1"]`),
   * believed wherever they appear. `0` reads no header.
   *
   * @default {0}
   */
  readonly trustProxy?: number | readonly string[];
  /**
   * Whether a connection over a Unix socket (which has no address: nginx or
   * a local load balancer in front) is a trusted proxy: the last hop it
   * names is then the client, or, with a list in `trustProxy`, the nearest
   * hop it names that is not in the list; with a count, the socket is the
   * nearest of those hops. Without it, such a request has no address to key
   * by, and gets what `unknownClient` says.
   *
   * @default {false}
   */
  readonly trustUnixSocket?: boolean;
  /**
   * The header the trusted proxies write: `"x-forwarded-for"` or
   * `"forwarded"`. Only the one named is read, so a client cannot pass off
   * the other.
   *
   * @default {"x-forwarded-for"}
   */
  readonly header?: "x-forwarded-for" | "forwarded";
  /**
   * The prefix length an IPv6 client is grouped by, 1 to 128 (128: each
   * address on its own).
   *
   * @default {56}
   */
  readonly ipv6Prefix?: number;
}

/**
 * The options of the adapters' key functions (`clientIp`,
 * `expressClientIp`, `fetchClientIp`): how the address is found, and what a
 * request whose address cannot be learned gets. `A` is what the key
 * function is handed: Hono's context, Express's request, or the request and
 * the server's info.
 */
export interface ClientKeyOptions<A extends unknown[]> extends ClientIpOptions {
  /**
   * What a request whose client address cannot be learned gets (a Unix
   * socket not trusted, or trusted and naming no address; a connection
   * whose peer is gone; a server that tells none): `"deny"`, a 429 (the
   * denial's key is {@link UNKNOWN_ADDRESS}, no key is checked); `"allow"`,
   * passed unlimited, as a key function's `undefined` is; or a function
   * giving its key from what the key function was handed. Each such
   * request is counted in the key function's `unknownClients`, whatever
   * it gets. Never one key shared by all of them unless the function gives
   * one.
   *
   * @default {"deny"}
   */
  readonly unknownClient?: "deny" | "allow" | ((...args: A) => KeyOf);
}

/**
 * An adapter's key function of the client's address, with the count of
 * requests whose address could not be learned.
 */
export type ClientIpKey<A extends unknown[]> = ((...args: A) => KeyOf) & {
  /** Requests whose client address could not be learned, since the key function was made. */
  readonly unknownClients: number;
};

/** A client's hops, read from the right, examined at most: a header longer than this is cut on its left. */
const MAX_HOPS = 64;

/** Dotted IPv4 with no leading zeros: an address, which {@link formatGrouped} writes as it is. */
const DOTTED_V4 =
  /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** An address as 16 bytes: IPv4 as `::ffff:a.b.c.d`. */
type Bytes = Uint8Array;

/** A trusted range: its bytes and its prefix length over 128 bits. */
interface Range {
  readonly bytes: Bytes;
  readonly bits: number;
}

/**
 * The client's address from the connection's peer and the request's
 * headers, or undefined when it cannot be learned. The peer is `undefined`
 * for a connection that has no address, a Unix socket's; anything that is
 * no address (`""` for a connection whose address is lost) is not trusted.
 */
type AddressFinder = (
  peer: string | undefined,
  header: (name: string) => string | null | undefined,
) => string | undefined;

/**
 * A function from the connection's peer and the request's headers to the
 * client's address, IPv6 grouped by its prefix (`2001:db8:1:100::/56`),
 * IPv4 as it is, or {@link UNKNOWN_ADDRESS} when it cannot be learned: what
 * such a request gets is then the caller's to decide (the adapters' key
 * functions deny it by default, see `unknownClient`). Pass `undefined` as
 * the peer for a connection with no address, a Unix socket's (trusted with
 * `trustUnixSocket`), and `""` for one whose address is lost (a TCP peer
 * that reset), which is never trusted.
 *
 * @param options The proxies to trust, the header they write, the IPv6 prefix.
 * @param who The helper's name, for messages.
 * @returns The resolver.
 * @throws {TypeError} when `trustProxy` is neither a count nor a list of addresses, or
 *   `trustUnixSocket` is not a boolean.
 * @throws {RangeError} when a count, an address, a range or the prefix is out of range.
 */
export function clientIpResolver(
  options: ClientIpOptions = {},
  who = "clientIp",
): (peer: string | undefined, header: (name: string) => string | null | undefined) => string {
  const find = addressFinder(options, who);
  return (peer, get) => find(peer, get) ?? UNKNOWN_ADDRESS;
}

function addressFinder(options: ClientIpOptions, who: string): AddressFinder {
  const { trustProxy = 0, header = "x-forwarded-for", ipv6Prefix = 56 } = options;
  const trustUnix = options.trustUnixSocket ?? false;
  if (!Number.isInteger(ipv6Prefix) || ipv6Prefix < 1 || ipv6Prefix > 128) {
    throw new RangeError(
      `${who}: ipv6Prefix must be a whole number from 1 to 128, got ${describe(ipv6Prefix)}`,
    );
  }
  if (header !== "x-forwarded-for" && header !== "forwarded") {
    throw new RangeError(
      `${who}: header must be "x-forwarded-for" or "forwarded", got ${describe(header)}`,
    );
  }
  if (typeof trustUnix !== "boolean") {
    throw new TypeError(
      `${who}: trustUnixSocket must be true or false, got ${describe(trustUnix)}`,
    );
  }
  const trusted = trustOf(trustProxy, who);
  return (peer, get) => {
    const unix = peer === undefined && trustUnix;
    const value = trusted !== 0 || unix ? get(header) : undefined;
    // The peer alone, the most common request, with no array made.
    if (!value && peer !== undefined && DOTTED_V4.test(peer)) return peer;
    const chain = value ? hopsOf(value, header).slice(-MAX_HOPS) : [];
    chain.push(peer ?? "");
    // Hops are parsed only when looked at, and a dotted IPv4 hop, as proxies
    // and servers write them, is an address and its own text unparsed:
    // parsing and writing every hop cost more than the check.
    const bytes: (Bytes | undefined | null)[] = new Array(chain.length).fill(null);
    const at = (i: number) => bytes[i] === null ? bytes[i] = parseAddress(chain[i]) : bytes[i];
    const isAddress = (i: number) => DOTTED_V4.test(chain[i]) || at(i) !== undefined;
    const last = chain.length - 1;
    let i = last;
    if (unix) {
      // The socket is the nearest proxy: the hop it names is where to start.
      if (--i < 0) return undefined;
      if (typeof trusted === "number") i = Math.max(0, i - Math.max(0, trusted - 1));
    } else if (!isAddress(i)) {
      return undefined;
    } else if (typeof trusted === "number") {
      i = Math.max(0, i - trusted);
    }
    if (typeof trusted !== "number") {
      while (i > 0 && at(i) !== undefined && trusted.some((r) => inRange(at(i)!, r))) i--;
    }
    // What a trusted proxy wrote but is no address (`unknown`, an obfuscated
    // name): the proxy that wrote it stands for the client, never the text;
    // a Unix socket stands for no one.
    while (i < last && !isAddress(i)) i++;
    if (DOTTED_V4.test(chain[i])) return chain[i];
    const found = at(i);
    return found === undefined ? undefined : formatGrouped(found, ipv6Prefix);
  };
}

/**
 * An adapter's key function: `address` finds the client's address with
 * the finder it is given; a request whose address it cannot learn is
 * counted and gets what `unknownClient` says. One rule for every adapter.
 *
 * @param options How the address is found, and what a request without one gets.
 * @param who The adapter's helper, for messages.
 * @param address The address of a request, from what the key function is handed.
 * @returns The key function, with its count of requests with no address.
 * @throws {TypeError} when an option is of the wrong type.
 * @throws {RangeError} when an option is out of range.
 */
export function clientKeyFunction<A extends unknown[]>(
  options: ClientKeyOptions<A>,
  who: string,
  address: (find: AddressFinder) => (...args: A) => string | undefined,
): ClientIpKey<A> {
  // Two fixed parameters rather than a rest one: the path of a known
  // address allocates nothing more than before.
  type Two<R> = (a: unknown, b: unknown) => R;
  const known = address(addressFinder(options ?? {}, who)) as unknown as Two<string | undefined>;
  const choice = options?.unknownClient ?? "deny";
  let unknown: Two<KeyOf>;
  if (choice === "deny") unknown = () => UNKNOWN_CLIENT;
  else if (choice === "allow") unknown = () => undefined;
  else if (typeof choice === "function") unknown = choice as unknown as Two<KeyOf>;
  else {
    throw new RangeError(
      `${who}: unknownClient must be "deny", "allow" or a function, got ${describe(choice)}`,
    );
  }
  let count = 0;
  const key = (a: unknown, b: unknown): KeyOf => {
    const found = known(a, b);
    if (found !== undefined) return found;
    count++;
    return unknown(a, b);
  };
  Object.defineProperty(key, "unknownClients", { get: () => count, enumerable: true });
  return key as unknown as ClientIpKey<A>;
}

/**
 * The peer to pass for a connection that reported no address: `undefined`
 * when it is a Unix socket's (trusted with `trustUnixSocket`), `""` when it
 * is not, or the server does not say (a TCP peer that reset has no address
 * either on node:http and Bun.serve, and must not pass for a trusted
 * socket). `served` is what the server handed the handler: Deno.serve's
 * info, Bun.serve's server, @hono/node-server's bindings, or a node:http
 * socket.
 *
 * @param served What the server handed the handler.
 * @returns The peer.
 */
export function addresslessPeer(served: unknown): undefined | "" {
  return overUnixSocket(served, 0) ? undefined : "";
}

/** What the servers hand their handlers, as far as telling a Unix socket goes. */
interface Served {
  readonly remoteAddr?: { readonly transport?: string };
  readonly requestIP?: unknown;
  readonly url?: unknown;
  readonly incoming?: { readonly socket?: unknown };
  readonly server?: { readonly address?: () => unknown };
}

function overUnixSocket(served: unknown, depth: number): boolean {
  const s = served as Served | null | undefined;
  if (s === null || typeof s !== "object" || depth > 2) return false;
  // Deno.serve's info: its transport.
  if (s.remoteAddr !== undefined) return s.remoteAddr?.transport === "unix";
  // Bun.serve's server: the URL it listens at (`unix://path`).
  if (typeof s.requestIP === "function") return String(s.url).startsWith("unix:");
  // @hono/node-server's bindings: their node:http socket.
  if (s.incoming !== undefined) return overUnixSocket(s.incoming?.socket, depth + 1);
  const server = s.server;
  if (server === null || typeof server !== "object") return false;
  // A node:http socket: its server listens on a path (a TCP one at an address).
  if (typeof server.address === "function" && !("requestIP" in server)) {
    return typeof server.address() === "string";
  }
  // Hono's environment holding the server (Bun's, or @hono/node-server's bindings).
  return overUnixSocket(server, depth + 1);
}

function trustOf(trust: number | readonly string[], who: string): number | Range[] {
  if (typeof trust === "number") {
    if (!Number.isInteger(trust) || trust < 0 || trust > MAX_HOPS) {
      throw new RangeError(
        `${who}: trustProxy must be a whole number of hops from 0 to ${MAX_HOPS}, got ${
          describe(trust)
        }`,
      );
    }
    return trust;
  }
  if (!Array.isArray(trust)) {
    throw new TypeError(
      `${who}: trustProxy must be a number of hops or a list of addresses, got ${describe(trust)}`,
    );
  }
  return trust.map((entry) => {
    const [address, bitsText, extra] = String(entry).split("/");
    const bytes = parseAddress(address);
    const v4 = bytes !== undefined && isV4(bytes) && !address.includes(":");
    const bits = bitsText === undefined ? 128 : Number(bitsText) + (v4 ? 96 : 0);
    if (
      typeof entry !== "string" || bytes === undefined || extra !== undefined ||
      !(bitsText === undefined || /^\d{1,3}$/.test(bitsText)) || bits > 128
    ) {
      throw new RangeError(
        `${who}: trustProxy entries must be addresses or CIDR ranges, got ${describe(entry)}`,
      );
    }
    return { bytes, bits };
  });
}

/** The hops a header lists, left (farthest) to right (nearest). */
function hopsOf(value: string, header: string): string[] {
  const items = value.split(",");
  if (header === "x-forwarded-for") return items.map((s) => s.trim());
  return items.map((element) => {
    for (const pair of element.split(";")) {
      const eq = pair.indexOf("=");
      if (eq > 0 && pair.slice(0, eq).trim().toLowerCase() === "for") {
        return pair.slice(eq + 1).trim().replace(/^"(.*)"$/, "$1");
      }
    }
    return "";
  });
}

function isV4(b: Bytes): boolean {
  for (let i = 0; i < 10; i++) if (b[i] !== 0) return false;
  return b[10] === 0xff && b[11] === 0xff;
}

function inRange(b: Bytes, r: Range): boolean {
  for (let bit = 0; bit < r.bits; bit += 8) {
    const mask = r.bits - bit >= 8 ? 0xff : (0xff << (8 - (r.bits - bit))) & 0xff;
    if ((b[bit >> 3] & mask) !== (r.bytes[bit >> 3] & mask)) return false;
  }
  return true;
}

/**
 * An address of a hop or a peer, as 16 bytes: IPv4, IPv6 (with or without
 * brackets, a zone or a port after the brackets), IPv4 with a port, or an
 * IPv4-mapped or NAT64 (`64:ff9b::/96`) IPv6 address, which is the IPv4 one.
 * Anything else is not an address.
 */
export function parseAddress(text: string): Bytes | undefined {
  let s = text.trim();
  if (s.startsWith("[")) {
    const end = s.indexOf("]");
    if (end < 0) return undefined;
    s = s.slice(1, end);
  } else if (/^[\d.]+:\d+$/.test(s)) {
    s = s.slice(0, s.indexOf(":"));
  }
  const zone = s.indexOf("%");
  const ip = parseIp(zone >= 0 ? s.slice(0, zone) : s);
  if (ip === undefined) return undefined;
  if (ip.length === 16 && !isNat64(ip)) return ip;
  const out = new Uint8Array(16);
  out[10] = out[11] = 0xff;
  out.set(ip.subarray(ip.length - 4), 12);
  return out;
}

/**
 * An address of the well-known NAT64 prefix, `64:ff9b::/96` (RFC 6052):
 * an IPv4 client as a translator in front of an IPv6 server shows it.
 * Grouped as IPv6, every such client would share one /56.
 */
function isNat64(b: Bytes): boolean {
  if (b[0] !== 0x00 || b[1] !== 0x64 || b[2] !== 0xff || b[3] !== 0x9b) return false;
  for (let i = 4; i < 12; i++) if (b[i] !== 0) return false;
  return true;
}

/** IPv4 dotted; IPv6 masked to `prefix` bits, as RFC 5952 writes it, with `/prefix` unless 128. */
function formatGrouped(b: Bytes, prefix: number): string {
  if (isV4(b)) return formatIp(b.subarray(12));
  const masked = b.slice();
  for (let bit = prefix; bit < 128; bit++) masked[bit >> 3] &= ~(0x80 >> (bit & 7));
  return prefix === 128 ? formatIp(masked) : `${formatIp(masked)}/${prefix}`;
}
