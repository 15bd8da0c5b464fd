/**
 * The cursors over a datagram's bytes: a {@link Writer} that fills a buffer
 * of a known size field by field, and a {@link Reader} that reads one
 * forward and never throws. Both know the fields every layout of this wire
 * is built from (big-endian integers, a member's ID, an address, a peer as
 * ID and address); what the fields mean, and in which order they come, is
 * the layout's: messages in `codec.ts`, the rules section's body in
 * `core/rules_sync/wire.ts` (written, a part at a time, with the same
 * {@link Writer}, its text fields by `core/rules_sync/entry_wire.ts`).
 *
 * @module
 */

import { Address, addressV4, FAMILY_IPV4, FAMILY_IPV6 } from "./address.ts";
import { getU16, getU32, setU16, setU32 } from "./bytes.ts";
import { MemberId } from "./member_id.ts";
import type { Peer } from "./message.ts";

/** Bytes of a member's ID on the wire: its two 32-bit halves. */
export const ID_BYTES = 8;

/**
 * Datagrams are cut from blocks of this many bytes, one after another, each
 * a view of its block: a typed array with memory of its own costs a separate
 * allocation outside the heap, and a simulated fleet of a thousand nodes
 * encodes some 60,000 datagrams (about a kilobyte each) a virtual second. A
 * datagram held keeps its whole block alive; most are sent and dropped at once.
 */
const BLOCK_BYTES = 64 * 1024;
let block = new ArrayBuffer(BLOCK_BYTES);
let blockAt = 0;

/** `size` zeroed bytes, never handed out before, from the current block or a new one. */
function zeroed(size: number): Uint8Array {
  if (size > BLOCK_BYTES) return new Uint8Array(size);
  if (blockAt + size > BLOCK_BYTES) {
    block = new ArrayBuffer(BLOCK_BYTES);
    blockAt = 0;
  }
  const bytes = new Uint8Array(block, blockAt, size);
  blockAt += size;
  return bytes;
}

/** Writes fields in order into a zeroed buffer of the size given; a number out of its range throws. */
export class Writer {
  readonly buffer: Uint8Array;
  #at = 0;

  constructor(size: number) {
    this.buffer = zeroed(size);
  }

  u8(value: number): void {
    this.buffer[this.#at++] = value;
  }

  u16(value: number, name: string): void {
    if (!Number.isInteger(value) || value < 0 || value > 0xffff) {
      throw new RangeError(`${name} must be an unsigned 16-bit integer, got ${value}`);
    }
    setU16(this.buffer, this.#at, value);
    this.#at += 2;
  }

  u32(value: number, name: string): void {
    if (!Number.isInteger(value) || value < 0 || value > 0xffff_ffff) {
      throw new RangeError(`${name} must be an unsigned 32-bit integer, got ${value}`);
    }
    setU32(this.buffer, this.#at, value);
    this.#at += 4;
  }

  id(id: MemberId): void {
    setU32(this.buffer, this.#at, id.hi);
    setU32(this.buffer, this.#at + 4, id.lo);
    this.#at += ID_BYTES;
  }

  peer(peer: Peer): void {
    this.id(peer.id);
    this.#at = peer.address.writeTo(this.buffer, this.#at);
  }

  /** A whole number below 2^53 as two u32, high first. */
  u64(value: number, name: string): void {
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new RangeError(`${name} must be a whole number below 2^53, got ${value}`);
    }
    setU32(this.buffer, this.#at, Math.floor(value / 2 ** 32));
    setU32(this.buffer, this.#at + 4, value % 2 ** 32);
    this.#at += 8;
  }

  bytes(bytes: Uint8Array): void {
    this.buffer.set(bytes, this.#at);
    this.#at += bytes.length;
  }

  skip(n: number): void {
    this.#at += n;
  }

  section(kind: number): number {
    this.u8(kind);
    this.#at += 2;
    return this.#at;
  }

  endSection(start: number): void {
    setU16(this.buffer, start - 2, this.#at - start);
  }

  /** Room left, bytes: a layout written a part at a time checks each part fits. */
  get room(): number {
    return this.buffer.length - this.#at;
  }

  /** The bytes written so far, a copy (the buffer is a view of a shared block). */
  written(): Uint8Array {
    return this.buffer.slice(0, this.#at);
  }
}

/**
 * Reads forward; the first overrun sets `error`, after which every read
 * yields 0. Also reads the rules section's body (`core/rules_sync`).
 */
export class Reader {
  /**
   * Why reading stopped: `"truncated"`, a field ran past the end; `"address"`,
   * an address of no family this wire knows, or not in its canonical form.
   * Both are `decode`'s errors of the same names.
   */
  error: "truncated" | "address" | undefined;
  #bytes: Uint8Array;
  #at: number;

  constructor(bytes: Uint8Array, at: number) {
    this.#bytes = bytes;
    this.#at = at;
  }

  get remaining(): number {
    return this.#bytes.length - this.#at;
  }

  #claim(n: number): number {
    if (this.error || this.remaining < n) {
      this.error ??= "truncated";
      return -1;
    }
    this.#at += n;
    return this.#at - n;
  }

  u8(): number {
    const at = this.#claim(1);
    return at < 0 ? 0 : this.#bytes[at];
  }

  u16(): number {
    const at = this.#claim(2);
    return at < 0 ? 0 : getU16(this.#bytes, at);
  }

  u32(): number {
    const at = this.#claim(4);
    return at < 0 ? 0 : getU32(this.#bytes, at);
  }

  take(n: number): Uint8Array {
    const at = this.#claim(n);
    return at < 0 ? new Uint8Array(0) : this.#bytes.subarray(at, at + n);
  }

  id(): MemberId {
    const at = this.#claim(ID_BYTES);
    return at < 0 ? ZERO_ID : new MemberId(getU32(this.#bytes, at), getU32(this.#bytes, at + 4));
  }

  peer(): Peer {
    const at = this.#claim(ID_BYTES);
    const hi = at < 0 ? 0 : getU32(this.#bytes, at);
    const lo = at < 0 ? 0 : getU32(this.#bytes, at + 4);
    const address = this.#address();
    // Most IDs are their address's (a mismatch is refused later): that
    // one's object, kept with the address, rather than one more a record.
    const own = address.id;
    const id = own.hi === hi && own.lo === lo ? own : new MemberId(hi, lo);
    return { id, address };
  }

  #address(): Address {
    const family = this.u8();
    const ipLength = family === FAMILY_IPV4 ? 4 : family === FAMILY_IPV6 ? 16 : 0;
    if (ipLength === 0) this.error ??= "address";
    if (ipLength === 4) {
      // Read in place: a view of its four bytes for each address was most of its cost.
      const ip = this.u32();
      const port = this.u16();
      return this.error ? PLACEHOLDER_ADDRESS : addressV4(ip, port);
    }
    const ip = this.take(ipLength);
    const port = this.u16();
    if (this.error) return PLACEHOLDER_ADDRESS;
    const address = Address.of(ip, port);
    // An IPv4-mapped IPv6 address is not canonical: its bytes would hash to another ID.
    if (address.byteLength !== ipLength + 3) this.error = "address";
    return address;
  }
}

const ZERO_ID = new MemberId(0, 0);
const PLACEHOLDER_ADDRESS = Address.of(new Uint8Array(4), 0);
