/**
 * Addresses of members: an IPv4 or IPv6 address and a UDP port, with one
 * canonical text and one canonical byte form, from which every node derives
 * the same member ID.
 *
 * @module
 */

import { fnv1a64, MemberId } from "./member_id.ts";
import { formatHostPort, splitHostPort } from "./host_port.ts";

/** Address family tag, as it appears on the wire (append-only). */
export const FAMILY_IPV4 = 4;
/** Address family tag, as it appears on the wire (append-only). */
export const FAMILY_IPV6 = 6;

/**
 * IPv4 addresses made lately, by IP and port, up to `MAX_RECENT`: every
 * datagram names its sender and the members it brings news of, the same
 * few hundred again and again, and an address is immutable, so one made
 * once serves every decode (its text and ID computed once). Past the bound
 * it starts afresh: a flood of made-up addresses costs their making, as
 * without it, and no more memory.
 */
const RECENT_V4 = new Map<number, Map<number, Address>>();
const MAX_RECENT = 8_192;
let recentV4 = 0;

/**
 * The IPv4 address `ip` (a u32, network order read big-endian) and `port`,
 * as {@link Address.of} makes it: from the recent ones when there. By port,
 * then the IP as an int32, so that a simulated fleet's keys are small
 * integers, not the boxed numbers a 48-bit key is.
 */
export function addressV4(ip: number, port: number): Address {
  const address = RECENT_V4.get(port)?.get(ip | 0);
  if (address !== undefined) return address;
  const bytes = Uint8Array.of(ip >>> 24, ip >>> 16, ip >>> 8, ip);
  return Address.of(bytes, port);
}

/**
 * An IP address and a port. Immutable; IPv4-mapped IPv6 addresses
 * (`::ffff:a.b.c.d`) are taken as the IPv4 address they map, so that a
 * dual-stack socket and an IPv4 one name a peer alike.
 *
 * The canonical bytes are the family tag (4 or 6), the address in network
 * order, then the port, big-endian: 7 or 19 bytes, as on the wire.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Address } from "@rateguard/guard/core";
 * const a = Address.parse("[2001:DB8:0:0:0:0:0:1]:7946");
 * assert(a.toString() === "[2001:db8::1]:7946");
 * assert(a.equals(Address.parse("[2001:db8::1]:7946")));
 * assert(a.id.toString().length === 16);
 * ```
 */
export class Address {
  readonly #bytes: Uint8Array;
  readonly #host: string;
  readonly #text: string;
  #id: MemberId | undefined;

  private constructor(bytes: Uint8Array, host: string, port: number) {
    this.#bytes = bytes;
    this.#host = host;
    this.#text = formatHostPort(host, port);
  }

  /**
   * An address from its IP (4 or 16 bytes, network order) and port.
   *
   * @throws {RangeError} if `ip` is not 4 or 16 bytes long or `port` not in 0..65535.
   *
   * @param ip 4 or 16 bytes, network order.
   * @param port 0 to 65535.
   * @returns The address.
   */
  static of(ip: Uint8Array, port: number): Address {
    if (!Number.isInteger(port) || port < 0 || port > 0xffff) {
      throw new RangeError(`port must be an integer from 0 to 65535, got ${port}`);
    }
    if (ip.length === 16 && isV4Mapped(ip)) ip = ip.subarray(12);
    if (ip.length !== 4 && ip.length !== 16) {
      throw new RangeError(`ip must be 4 or 16 bytes long, got ${ip.length}`);
    }
    if (ip.length === 4) {
      const key = ip[0] << 24 | ip[1] << 16 | ip[2] << 8 | ip[3];
      let byIp = RECENT_V4.get(port);
      let address = byIp?.get(key);
      if (address === undefined) {
        if (recentV4 >= MAX_RECENT) {
          RECENT_V4.clear();
          recentV4 = 0;
          byIp = undefined;
        }
        if (byIp === undefined) RECENT_V4.set(port, byIp = new Map());
        byIp.set(key, address = Address.#make(ip, port));
        recentV4++;
      }
      return address;
    }
    return Address.#make(ip, port);
  }

  static #make(ip: Uint8Array, port: number): Address {
    const bytes = new Uint8Array(ip.length + 3);
    bytes[0] = ip.length === 4 ? FAMILY_IPV4 : FAMILY_IPV6;
    bytes.set(ip, 1);
    bytes[ip.length + 1] = port >>> 8;
    bytes[ip.length + 2] = port & 0xff;
    return new Address(bytes, formatIp(ip), port);
  }

  /**
   * Parses `a.b.c.d:port` or `[v6]:port`. Host names are not addresses:
   * resolving them is the runtime's business.
   *
   * @throws {TypeError} if `text` is not an address with a port.
   *
   * @param text The address's text.
   * @returns The address.
   */
  static parse(text: string): Address {
    const split = splitHostPort(text);
    const ip = split && (split.bracketed ? parseV6(split.host) : parseV4(split.host));
    if (!split || !ip) throw new TypeError(`not an ip:port or [ipv6]:port: ${text}`);
    return Address.of(ip, split.port);
  }

  /** The IP as text, without brackets: `10.0.0.3`, `2001:db8::1`. */
  get host(): string {
    return this.#host;
  }

  /** 4 or 6. */
  get family(): 4 | 6 {
    return this.#bytes[0] === FAMILY_IPV4 ? 4 : 6;
  }

  /** The UDP port. */
  get port(): number {
    const n = this.#bytes.length;
    return (this.#bytes[n - 2] << 8) | this.#bytes[n - 1];
  }

  /** The IP in network order (a copy). */
  get ip(): Uint8Array {
    return this.#bytes.slice(1, this.#bytes.length - 2);
  }

  /** The canonical bytes (a copy): family tag, IP, port. */
  get bytes(): Uint8Array {
    return this.#bytes.slice();
  }

  /** Length of the canonical bytes: 7 for IPv4, 19 for IPv6. */
  get byteLength(): number {
    return this.#bytes.length;
  }

  /** The member ID of whoever is reached here: FNV-1a 64 of the canonical bytes. */
  get id(): MemberId {
    if (!this.#id) {
      const [hi, lo] = fnv1a64(this.#bytes);
      this.#id = new MemberId(hi, lo);
    }
    return this.#id;
  }

  /**
   * Copies the canonical bytes into `target` at `offset`; returns the offset after them.
   *
   * @param target Where to write.
   * @param offset Where in `target` to start.
   * @returns The offset after the bytes written.
   * @throws {RangeError} if they do not fit in `target` from `offset`.
   */
  writeTo(target: Uint8Array, offset: number): number {
    // 7 or 19 bytes, written for every record encoded: a loop costs less than `set`'s call.
    const bytes = this.#bytes;
    if (!(offset >= 0 && offset + bytes.length <= target.length)) {
      throw new RangeError(`no room for ${bytes.length} bytes at ${offset} of ${target.length}`);
    }
    for (let i = 0; i < bytes.length; i++) target[offset + i] = bytes[i];
    return offset + bytes.length;
  }

  /**
   * Whether both name the same IP and port.
   *
   * @param other Another address.
   * @returns Whether they are the same.
   */
  equals(other: Address): boolean {
    return this.#text === other.#text;
  }

  /**
   * The canonical text: `a.b.c.d:port` or `[v6]:port` (RFC 5952).
   *
   * @returns The text `parse` reads back.
   */
  toString(): string {
    return this.#text;
  }
}

/**
 * The bytes of an IP literal (no brackets, port or zone): 4 for IPv4 and
 * for an IPv4-mapped IPv6 address, 16 for IPv6; undefined for anything else.
 * The one parser of IP text, for members' addresses and clients' alike.
 *
 * @param text The literal.
 * @returns Its bytes, network order.
 */
export function parseIp(text: string): Uint8Array | undefined {
  const ip = text.includes(":") ? parseV6(text) : parseV4(text);
  return ip !== undefined && ip.length === 16 && isV4Mapped(ip) ? ip.subarray(12) : ip;
}

/**
 * The canonical text of 4 or 16 bytes: dotted IPv4, or IPv6 as RFC 5952 writes it.
 *
 * @param ip The bytes, network order.
 * @returns The text {@link parseIp} reads back.
 */
export function formatIp(ip: Uint8Array): string {
  return ip.length === 4 ? ip.join(".") : formatV6(ip);
}

function isV4Mapped(ip: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (ip[i] !== 0) return false;
  return ip[10] === 0xff && ip[11] === 0xff;
}

function parseV4(text: string): Uint8Array | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  const ip = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    // Leading zeros are refused: some parsers read them as octal.
    if (!/^(0|[1-9]\d{0,2})$/.test(parts[i]) || Number(parts[i]) > 255) return undefined;
    ip[i] = Number(parts[i]);
  }
  return ip;
}

function parseV6(text: string): Uint8Array | undefined {
  const halves = text.split("::");
  // A dotted IPv4 tail may only end the address, never precede a "::".
  if (halves.length > 2 || (halves.length === 2 && halves[0].includes("."))) return undefined;
  const head = parseGroups(halves[0]);
  const tail = halves.length === 2 ? parseGroups(halves[1]) : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const groups = [...head, ...new Array<number>(missing).fill(0), ...tail];
  const ip = new Uint8Array(16);
  groups.forEach((g, i) => {
    ip[2 * i] = g >>> 8;
    ip[2 * i + 1] = g & 0xff;
  });
  return ip;
}

/** Colon-separated hex groups, the last of which may be a dotted IPv4 (two groups). */
function parseGroups(text: string): number[] | undefined {
  if (text === "") return [];
  const parts = text.split(":");
  const groups: number[] = [];
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (i === parts.length - 1 && part.includes(".")) {
      const v4 = parseV4(part);
      if (!v4) return undefined;
      groups.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
    } else if (/^[0-9A-Fa-f]{1,4}$/.test(part)) {
      groups.push(parseInt(part, 16));
    } else {
      return undefined;
    }
  }
  return groups.length <= 8 ? groups : undefined;
}

/** RFC 5952: lowercase, no leading zeros, the longest run of two or more zero groups as `::`. */
function formatV6(ip: Uint8Array): string {
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((ip[i] << 8) | ip[i + 1]);
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) [bestStart, bestLength] = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(":");
  const head = hex.slice(0, bestStart).join(":");
  const tail = hex.slice(bestStart + bestLength).join(":");
  return `${head}::${tail}`;
}
