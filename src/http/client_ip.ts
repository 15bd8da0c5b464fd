/**
 * The client's address, for a rate limit key, as the adapters (Hono,
 * Express, fetch) find it: the peer of the connection, or, behind proxies
 * the application names, the address the nearest untrusted hop was seen
 * at, read from `X-Forwarded-For` or `Forwarded` (RFC 7239). A header is
 * believed only as far as trusted proxies wrote it: what a client puts
 * there itself is further left and never read. IPv6 addresses are grouped
 * by a prefix (/56 by default), since one client is given a whole prefix
 * and could otherwise rotate addresses inside it.
 *
 * @module
 */

import { describe } from "../core/limit.ts";
import { formatIp, parseIp } from "../proto/address.ts";

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

/** The address given when the peer is unknown: one key for all such requests, never the client's choice. */
export const UNKNOWN_ADDRESS = "unknown";

/** A client's hops, read from the right, examined at most: a header longer than this is cut on its left. */
const MAX_HOPS = 64;

/** An address as 16 bytes: IPv4 as `::ffff:a.b.c.d`. */
type Bytes = Uint8Array;

/** A trusted range: its bytes and its prefix length over 128 bits. */
interface Range {
  readonly bytes: Bytes;
  readonly bits: number;
}

/**
 * A function from the connection's peer and the request's headers to the
 * client's address, IPv6 grouped by its prefix (`2001:db8:1:100::/56`),
 * IPv4 as it is, or {@link UNKNOWN_ADDRESS}.
 *
 * @param options The proxies to trust, the header they write, the IPv6 prefix.
 * @param who The helper's name, for messages.
 * @returns The resolver.
 * @throws {TypeError} when `trustProxy` is neither a count nor a list of addresses.
 * @throws {RangeError} when a count, an address, a range or the prefix is out of range.
 */
export function clientIpResolver(
  options: ClientIpOptions = {},
  who = "clientIp",
): (peer: string | undefined, header: (name: string) => string | null | undefined) => string {
  const { trustProxy = 0, header = "x-forwarded-for", ipv6Prefix = 56 } = options;
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
  const trusted = trustOf(trustProxy, who);
  return (peer, get) => {
    const chain: string[] = [];
    if (trusted !== 0) {
      const value = get(header);
      if (value) chain.push(...hopsOf(value, header).slice(-MAX_HOPS));
    }
    chain.push(peer ?? "");
    const bytes = chain.map((hop) => parseAddress(hop));
    let i = chain.length - 1;
    if (bytes[i] === undefined) return UNKNOWN_ADDRESS;
    if (typeof trusted === "number") {
      i = Math.max(0, i - trusted);
    } else {
      while (i > 0 && bytes[i] !== undefined && trusted.some((r) => inRange(bytes[i]!, r))) i--;
    }
    // What a trusted proxy wrote but is no address (`unknown`, an obfuscated
    // name): the proxy that wrote it stands for the client, never the text.
    while (bytes[i] === undefined) i++;
    return formatGrouped(bytes[i]!, ipv6Prefix);
  };
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
