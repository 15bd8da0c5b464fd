/**
 * Member IDs: a 64-bit FNV-1a hash of a member's canonical address bytes.
 *
 * Every node derives a peer's ID from its address alone, so nobody can claim
 * an ID detached from where it is reached. FNV-1a is chosen because any
 * implementation, in any language, gets it right in a few lines; it is not a
 * defence against forgery, which is what signing is for.
 *
 * @module
 */

/** FNV-1a 64-bit offset basis, as two 32-bit halves. */
const OFFSET_HI = 0xcbf29ce4;
const OFFSET_LO = 0x84222325;
/** FNV 64-bit prime is 2^40 + 0x1b3; the 2^40 part is a shift by 8 into the high word. */
const PRIME_LOW_BITS = 0x1b3;

/**
 * A 64-bit member ID, held as two unsigned 32-bit halves so that hot paths
 * never touch `bigint`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Address, MemberId } from "@rateguard/guard/core";
 * const id = MemberId.of(Address.parse("10.0.0.1:7946"));
 * assert(id.equals(MemberId.fromHex(id.toString())));
 * ```
 */
export class MemberId {
  /** The high 32 bits, unsigned. */
  readonly hi: number;
  /** The low 32 bits, unsigned. */
  readonly lo: number;
  /** The text, once asked for: an address's ID names its member in every report sent to it. */
  #text: string | undefined;

  /**
   * An ID from its two halves.
   *
   * @throws {RangeError} if a half is not an unsigned 32-bit integer.
   *
   * @param hi The high 32 bits.
   * @param lo The low 32 bits.
   */
  constructor(hi: number, lo: number) {
    if (!isU32(hi)) throw new RangeError(`hi must be an unsigned 32-bit integer, got ${hi}`);
    if (!isU32(lo)) throw new RangeError(`lo must be an unsigned 32-bit integer, got ${lo}`);
    this.hi = hi;
    this.lo = lo;
  }

  /**
   * Returns the ID every node derives from `address`: FNV-1a 64 of its canonical bytes.
   *
   * @param address An address, or anything with its canonical bytes.
   * @returns The ID.
   */
  static of(address: { readonly bytes: Uint8Array }): MemberId {
    const [hi, lo] = fnv1a64(address.bytes);
    return new MemberId(hi, lo);
  }

  /**
   * Parses the 16 hexadecimal digits that `toString` writes.
   *
   * @throws {TypeError} if `hex` is not 16 hexadecimal digits.
   *
   * @param hex 16 hexadecimal digits.
   * @returns The ID.
   */
  static fromHex(hex: string): MemberId {
    if (!/^[0-9a-f]{16}$/i.test(hex)) throw new TypeError(`not a 64-bit hex ID: ${hex}`);
    return new MemberId(parseInt(hex.slice(0, 8), 16), parseInt(hex.slice(8), 16));
  }

  /**
   * Whether both IDs are the same 64 bits.
   *
   * @param other Another ID.
   * @returns Whether they are equal.
   */
  equals(other: MemberId): boolean {
    return this.hi === other.hi && this.lo === other.lo;
  }

  /**
   * The ID as one `bigint`, for logs and tests, off the hot paths.
   *
   * @returns The ID, an unsigned 64-bit bigint.
   */
  toBigInt(): bigint {
    return (BigInt(this.hi) << 32n) | BigInt(this.lo);
  }

  /**
   * 16 lowercase hexadecimal digits: {@link memberIdText}.
   *
   * @returns The text `fromHex` reads back.
   */
  toString(): string {
    return this.#text ??= memberIdText(this);
  }
}

/**
 * The text form of a member ID given as its halves (a decoded report's
 * origin, say): 16 lowercase hexadecimal digits, as `MemberId.toString`.
 *
 * @param id The two unsigned 32-bit halves.
 * @returns The text.
 */
export function memberIdText(id: { readonly hi: number; readonly lo: number }): string {
  return id.hi.toString(16).padStart(8, "0") + id.lo.toString(16).padStart(8, "0");
}

/**
 * FNV-1a 64 over `bytes`, computed with 32-bit halves.
 *
 * @returns The hash as `[hi, lo]`, both unsigned 32-bit.
 *
 * @param bytes The bytes to hash.
 */
export function fnv1a64(bytes: Uint8Array): [number, number] {
  let hi = OFFSET_HI;
  let lo = OFFSET_LO;
  for (let i = 0; i < bytes.length; i++) {
    lo = (lo ^ bytes[i]) >>> 0;
    // (hi·2^32 + lo) × (2^40 + 0x1b3) mod 2^64, split by halves: lo × 0x1b3
    // needs 41 bits, exact in a double; its carry and lo << 8 feed the high word.
    const loProduct = lo * PRIME_LOW_BITS;
    const carry = Math.floor(loProduct / 0x1_0000_0000);
    hi = (Math.imul(hi, PRIME_LOW_BITS) + carry + (lo << 8)) >>> 0;
    lo = loProduct >>> 0;
  }
  return [hi, lo];
}

function isU32(value: number): boolean {
  return Number.isInteger(value) && value >= 0 && value <= 0xffff_ffff;
}
