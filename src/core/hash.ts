/**
 * 64-bit key hashes: what travels on the wire in place of a key. SipHash,
 * keyed by the cluster's key salt when one is set (so nobody without it can
 * craft a key that hashes like another's) and by a fixed public key
 * otherwise. Computed when a key first takes a place, never per check.
 *
 * SipHash-1-3 (one compression round, three finalisation rounds) is the
 * variant the rateguard reference uses for salted keys; the implementation
 * is generic in the round counts so that it can be checked against the
 * published SipHash-2-4 test vectors. Arithmetic is on 32-bit halves: no
 * BigInt on the way, one BigInt for the result.
 *
 * @module
 */

/** A SipHash key: 16 bytes. */
export interface HashKey {
  /** Bytes 0..7, little-endian: the high 32 bits. */
  readonly k0Hi: number;
  /** Bytes 0..7, little-endian: the low 32 bits. */
  readonly k0Lo: number;
  /** Bytes 8..15, little-endian: the high 32 bits. */
  readonly k1Hi: number;
  /** Bytes 8..15, little-endian: the low 32 bits. */
  readonly k1Lo: number;
}

/**
 * Reads a 16-byte SipHash key. A guard built with `keySalt(salt)` uses the
 * first 16 bytes of the salt's SHA-256 (`saltHashKey` of the main entry
 * computes it); pass the same to an `Enforcer` of this core to hash alike.
 *
 * @param bytes Exactly 16 bytes.
 * @returns The key.
 * @throws {RangeError} when `bytes` is not 16 bytes.
 */
export function hashKey(bytes: Uint8Array): HashKey {
  if (!(bytes instanceof Uint8Array) || bytes.length !== 16) {
    throw new RangeError(
      `a hash key is 16 bytes, got ${bytes instanceof Uint8Array ? bytes.length : typeof bytes}`,
    );
  }
  const word = (at: number) =>
    (bytes[at] | bytes[at + 1] << 8 | bytes[at + 2] << 16 | bytes[at + 3] << 24) >>> 0;
  return { k0Lo: word(0), k0Hi: word(4), k1Lo: word(8), k1Hi: word(12) };
}

/** The public key of unsalted hashes: "rateguard-keys-1" in ASCII. */
export const PUBLIC_HASH_KEY: HashKey = hashKey(
  new Uint8Array([...("rateguard-keys-1")].map((c) => c.charCodeAt(0))),
);

/**
 * SipHash-c-d over `n` bytes of `input`. One function with the state in
 * locals: module-level state or a helper per round costs several times more
 * on every engine measured, for the same arithmetic.
 */
function sipHash(key: HashKey, input: Uint8Array, n: number, c: number, d: number): number {
  let v0h = (key.k0Hi ^ 0x736f6d65) >>> 0, v0l = (key.k0Lo ^ 0x70736575) >>> 0;
  let v1h = (key.k1Hi ^ 0x646f7261) >>> 0, v1l = (key.k1Lo ^ 0x6e646f6d) >>> 0;
  let v2h = (key.k0Hi ^ 0x6c796765) >>> 0, v2l = (key.k0Lo ^ 0x6e657261) >>> 0;
  let v3h = (key.k1Hi ^ 0x74656462) >>> 0, v3l = (key.k1Lo ^ 0x79746573) >>> 0;
  const words = (n >> 3) + 1; // the whole words, then one of the rest
  // Words are read little-endian; the last carries the remaining bytes with
  // the length's low byte on top; one more pass with no word finalises.
  for (let w = 0; w <= words; w++) {
    let ml = 0, mh = 0, count = c;
    if (w < words - 1) {
      const i = w << 3;
      ml = (input[i] | input[i + 1] << 8 | input[i + 2] << 16 | input[i + 3] << 24) >>> 0;
      mh = (input[i + 4] | input[i + 5] << 8 | input[i + 6] << 16 | input[i + 7] << 24) >>> 0;
    } else if (w === words - 1) {
      mh = (n & 0xff) << 24;
      for (let j = w << 3; j < n; j++) {
        const shift = (j & 7) * 8;
        if (shift < 32) ml |= input[j] << shift;
        else mh |= input[j] << (shift - 32);
      }
      ml >>>= 0;
      mh >>>= 0;
    } else {
      v2l = (v2l ^ 0xff) >>> 0;
      count = d;
    }
    v3h = (v3h ^ mh) >>> 0;
    v3l = (v3l ^ ml) >>> 0;
    for (let r = 0; r < count; r++) {
      let lo = (v0l + v1l) >>> 0;
      v0h = (v0h + v1h + (lo < v0l ? 1 : 0)) >>> 0;
      v0l = lo;
      let h = (v1h << 13 | v1l >>> 19) >>> 0;
      let l = (v1l << 13 | v1h >>> 19) >>> 0;
      v1h = (h ^ v0h) >>> 0;
      v1l = (l ^ v0l) >>> 0;
      h = v0h, v0h = v0l, v0l = h;
      lo = (v2l + v3l) >>> 0;
      v2h = (v2h + v3h + (lo < v2l ? 1 : 0)) >>> 0;
      v2l = lo;
      h = (v3h << 16 | v3l >>> 16) >>> 0;
      l = (v3l << 16 | v3h >>> 16) >>> 0;
      v3h = (h ^ v2h) >>> 0;
      v3l = (l ^ v2l) >>> 0;
      lo = (v0l + v3l) >>> 0;
      v0h = (v0h + v3h + (lo < v0l ? 1 : 0)) >>> 0;
      v0l = lo;
      h = (v3h << 21 | v3l >>> 11) >>> 0;
      l = (v3l << 21 | v3h >>> 11) >>> 0;
      v3h = (h ^ v0h) >>> 0;
      v3l = (l ^ v0l) >>> 0;
      lo = (v2l + v1l) >>> 0;
      v2h = (v2h + v1h + (lo < v2l ? 1 : 0)) >>> 0;
      v2l = lo;
      h = (v1h << 17 | v1l >>> 15) >>> 0;
      l = (v1l << 17 | v1h >>> 15) >>> 0;
      v1h = (h ^ v2h) >>> 0;
      v1l = (l ^ v2l) >>> 0;
      h = v2h, v2h = v2l, v2l = h;
    }
    v0h = (v0h ^ mh) >>> 0;
    v0l = (v0l ^ ml) >>> 0;
  }
  HASH_HI = (v0h ^ v1h ^ v2h ^ v3h) >>> 0;
  return (v0l ^ v1l ^ v2l ^ v3l) >>> 0;
}

let HASH_HI = 0;

/** SipHash-c-d of raw bytes; exported for its test vectors. */
export function sipHashBytes(key: HashKey, bytes: Uint8Array, c: number, d: number): bigint {
  const lo = sipHash(key, bytes, bytes.length, c, d);
  return BigInt(HASH_HI) << 32n | BigInt(lo);
}

// UTF-8 of a string into a reusable buffer: the core has no TextEncoder
// (it is a web API, not ES2022), and a key is usually short ASCII.
let utf8 = new Uint8Array(256);

/** Appends the UTF-8 of `s` to the buffer at `at`; returns the new length. */
function appendUtf8(s: string, at: number): number {
  if (utf8.length < at + s.length * 3) {
    const bigger = new Uint8Array(Math.max(utf8.length * 2, at + s.length * 3));
    bigger.set(utf8.subarray(0, at));
    utf8 = bigger;
  }
  const buf = utf8;
  let len = at;
  for (let i = 0; i < s.length; i++) {
    let cp = s.charCodeAt(i);
    if (cp < 0x80) {
      buf[len++] = cp;
      continue;
    }
    if (cp >= 0xd800 && cp < 0xdc00 && i + 1 < s.length) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next < 0xe000) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (next - 0xdc00);
        i++;
      }
    }
    // A lone surrogate stays itself, in three bytes (WTF-8), rather than
    // becoming U+FFFD as with TextEncoder: keys that differ only there are
    // different keys here, and must not share a hash on the wire.
    if (cp < 0x800) {
      buf[len++] = 0xc0 | cp >> 6;
      buf[len++] = 0x80 | cp & 63;
    } else if (cp < 0x10000) {
      buf[len++] = 0xe0 | cp >> 12;
      buf[len++] = 0x80 | cp >> 6 & 63;
      buf[len++] = 0x80 | cp & 63;
    } else {
      buf[len++] = 0xf0 | cp >> 18;
      buf[len++] = 0x80 | cp >> 12 & 63;
      buf[len++] = 0x80 | cp >> 6 & 63;
      buf[len++] = 0x80 | cp & 63;
    }
  }
  return len;
}

/**
 * The bytes {@link keyHash} encodes `s` to (UTF-8, a lone surrogate in
 * three bytes), as a fresh array: for what goes on the wire.
 */
export function utf8Bytes(s: string): Uint8Array {
  return utf8.slice(0, appendUtf8(s, 0));
}

/**
 * The string of bytes {@link utf8Bytes} made (UTF-8, a lone surrogate in
 * three bytes); undefined for bytes that are not such UTF-8. Made from its
 * code units at once, not grown a character at a time.
 */
export function utf8Decode(bytes: Uint8Array): string | undefined {
  const units: number[] = [];
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i];
    const n = b < 0x80
      ? 0
      : b >= 0xc2 && b < 0xe0
      ? 1
      : b >= 0xe0 && b < 0xf0
      ? 2
      : b < 0xf5
      ? 3
      : -1;
    if (n < 0 || b >= 0x80 && b < 0xc2) return undefined;
    let cp = n === 0 ? b : b & (0x3f >> n);
    for (let k = 1; k <= n; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return undefined;
      cp = cp << 6 | c & 0x3f;
    }
    const least = [0, 0x80, 0x800, 0x10000][n];
    if (cp < least || cp > 0x10ffff) return undefined;
    if (cp < 0x10000) units.push(cp);
    else units.push(0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + ((cp - 0x10000) & 0x3ff));
    i += n + 1;
  }
  let out = "";
  // In slices: a call takes only so many arguments.
  for (let at = 0; at < units.length; at += 4_096) {
    out += String.fromCharCode(...units.slice(at, at + 4_096));
  }
  return out;
}

/**
 * The length of `s` in the bytes {@link keyHash} encodes it to: UTF-8, a lone
 * surrogate in three bytes. Counted, not encoded: nothing is allocated.
 */
export function utf8Length(s: string): number {
  let len = s.length; // a byte per code unit, then what more each takes
  for (let i = 0; i < s.length; i++) {
    const cu = s.charCodeAt(i);
    if (cu < 0x80) continue;
    if (cu < 0x800) {
      len += 1;
      continue;
    }
    len += 2;
    // A pair is two code units and four bytes: its second half adds nothing.
    if (cu < 0xdc00 && cu >= 0xd800 && i + 1 < s.length) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next < 0xe000) i++;
    }
  }
  return len;
}

/** Writes `<length of the class>:<class><key>` as UTF-8; returns its length. */
function encodeInput(className: string, key: string): number {
  let len = appendUtf8(String(className.length), 0);
  utf8[len++] = 0x3a; // ":"
  len = appendUtf8(className, len);
  return appendUtf8(key, len);
}

/** A 64-bit hash as two unsigned 32-bit halves: cheap to make, to compare and to put on the wire. */
export interface Hash64 {
  /** The high 32 bits. */
  readonly hi: number;
  /** The low 32 bits. */
  readonly lo: number;
}

/** The hash as one BigInt, for people and for the public API. */
export function hashToBigInt(h: Hash64): bigint {
  return BigInt(h.hi) << 32n | BigInt(h.lo);
}

/**
 * The hash's top 53 bits as a number: exact, and a cheap Map key. Two keys
 * share it with odds of one in 2^53 per pair; where that matters (the wire),
 * the whole 64 bits are used.
 */
export function hashId(h: Hash64): number {
  return hashIdOf(h.hi, h.lo);
}

/** {@link hashId} of the hash given as its halves, as a report on the wire holds it. */
export function hashIdOf(hi: number, lo: number): number {
  return (hi >>> 11) * 0x100000000 + lo;
}

/** As {@link keyHash}, in halves. */
export function keyHash64(key: HashKey, className: string, k: string): Hash64 {
  const len = encodeInput(className, k);
  const lo = sipHash(key, utf8, len, 1, 3);
  return { hi: HASH_HI, lo };
}

/**
 * The 64-bit hash of a key in a class: SipHash-1-3 over the UTF-8 of
 * `<length of the class>:<class><key>`, so that no two (class, key) pairs
 * share an input. The length is the class's in UTF-16 code units; a lone
 * surrogate is encoded as its code unit in three bytes (WTF-8), so that
 * distinct strings never share an input.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { keyHash, PUBLIC_HASH_KEY } from "./hash.ts";
 * const h = keyHash(PUBLIC_HASH_KEY, "pro", "tenant:42");
 * assert(h === keyHash(PUBLIC_HASH_KEY, "pro", "tenant:42"));
 * assert(h !== keyHash(PUBLIC_HASH_KEY, "", "protenant:42"));
 * ```
 *
 * @param key The hash key: a salt's, or {@link PUBLIC_HASH_KEY}.
 * @param className The class (`""`: the default class).
 * @param k The key.
 * @returns The hash, an unsigned 64-bit bigint.
 */
export function keyHash(key: HashKey, className: string, k: string): bigint {
  return hashToBigInt(keyHash64(key, className, k));
}
