/**
 * Signed gossip, the policy half: secrets, the three modes, and what a node
 * does with a datagram by its mode and its tag. The MAC itself
 * (HMAC-SHA256, cut to 16 bytes) is computed where the runtime has it, Web
 * Crypto, and handed in: this module does no cryptography and no I/O.
 *
 * @module
 */

import { FLAG_SIGNED, prepareSigned, splitSigned, TAG_BYTES } from "../proto/mod.ts";
import { describe } from "./describe.ts";

/** The least length of a gossip secret. */
export const MIN_SECRET_BYTES = 32;
/** The least length of a key salt. */
export const MIN_SALT_BYTES = 16;

const HIDDEN = "Secret([hidden])";

/**
 * A gossip secret: at least 32 random bytes, the same on every node. It
 * never shows itself: not in `toString`, `JSON.stringify`, `console.log`
 * (Deno, Bun and Node), errors, stats or metrics.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Secret } from "@rateguard/guard";
 * const secret = new Secret(new Uint8Array(32).fill(7));
 * assert(String(secret) === "Secret([hidden])");
 * assert(JSON.stringify({ secret }) === '{"secret":"[hidden]"}');
 * ```
 */
export class Secret {
  readonly #bytes: Uint8Array<ArrayBuffer>;

  /**
   * A secret from raw bytes, copied.
   *
   * @param bytes At least 32 bytes, random.
   * @throws {TypeError} when `bytes` is not a `Uint8Array`.
   * @throws {RangeError} when it is shorter than 32 bytes.
   */
  constructor(bytes: Uint8Array) {
    if (!(bytes instanceof Uint8Array)) {
      throw new TypeError(`a Secret is made of bytes (a Uint8Array), got ${describe(bytes)}`);
    }
    if (bytes.length < MIN_SECRET_BYTES) {
      throw new RangeError(
        `a Secret needs at least ${MIN_SECRET_BYTES} bytes, got ${bytes.length}`,
      );
    }
    this.#bytes = bytes.slice();
  }

  /**
   * A copy of the bytes, for the runtime's MAC; not for display. Changing it changes nothing.
   *
   * @returns A copy of the secret's bytes.
   */
  reveal(): Uint8Array<ArrayBuffer> {
    return this.#bytes.slice();
  }

  /**
   * Whether two secrets hold the same bytes.
   *
   * @param other Another secret.
   * @returns Whether their bytes are equal, compared in constant time.
   */
  equals(other: Secret): boolean {
    const a = this.#bytes, b = other.#bytes;
    if (a.length !== b.length) return false;
    let diff = 0;
    for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
    return diff === 0;
  }

  /**
   * `Secret([hidden])`.
   *
   * @returns A placeholder, never the bytes.
   */
  toString(): string {
    return HIDDEN;
  }

  /**
   * `"[hidden]"`.
   *
   * @returns A placeholder, never the bytes.
   */
  toJSON(): string {
    return "[hidden]";
  }

  /**
   * What Node's and Bun's inspectors print.
   *
   * @returns A placeholder, never the bytes.
   */
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return HIDDEN;
  }

  /**
   * What Deno's inspector prints.
   *
   * @returns A placeholder, never the bytes.
   */
  [Symbol.for("Deno.customInspect")](): string {
    return HIDDEN;
  }
}

/** How a node signs and what it accepts; see {@link GossipAuth}. */
export type GossipAuthMode = "off" | "transitional" | "required";

/**
 * The three modes of signed gossip.
 *
 * - `Off`: sends unsigned; takes signed datagrams without checking them.
 * - `Transitional`: signs; takes signed datagrams with a valid tag, and
 *   unsigned ones (for the minutes of a rollout only: a forgery passes by
 *   going unsigned).
 * - `Required`: signs; drops every datagram without a valid tag.
 *
 * Turning signing on takes three rolling updates (Off, Transitional,
 * Required), each on every node before the next; turning it off walks them
 * back. Required straight to Off splits the cluster for the rollout.
 */
export const GossipAuth: {
  readonly Off: GossipAuthMode;
  readonly Transitional: GossipAuthMode;
  readonly Required: GossipAuthMode;
} = { Off: "off", Transitional: "transitional", Required: "required" };

/** A mode with its secrets, checked: at most two, the first signs, either verifies. */
export interface AuthConfig {
  /** The mode. */
  readonly mode: GossipAuthMode;
  /** The secrets; empty only when the mode is Off. */
  readonly secrets: readonly Secret[];
}

/**
 * Validates a mode and its secrets.
 *
 * @param mode `"off"`, `"transitional"` or `"required"`.
 * @param secrets At most two; the first signs, either verifies.
 * @returns The configuration, checked.
 * @throws {TypeError} when the mode is unknown or a secret is not a {@link Secret}.
 * @throws {RangeError} when there are more than two secrets, or none for a mode that signs.
 */
export function authConfig(mode: GossipAuthMode, secrets: readonly Secret[] = []): AuthConfig {
  if (mode !== "off" && mode !== "transitional" && mode !== "required") {
    throw new TypeError(
      `gossip auth: unknown mode ${describe(mode)}: expected off, transitional or required`,
    );
  }
  if (!Array.isArray(secrets) || secrets.some((s) => !(s instanceof Secret))) {
    throw new TypeError("gossip auth: secrets must be an array of Secret");
  }
  if (secrets.length > 2) {
    throw new RangeError(`gossip auth: at most two secrets, got ${secrets.length}`);
  }
  if (mode !== "off" && secrets.length === 0) {
    throw new RangeError(`gossip auth: ${mode} needs a secret to sign with`);
  }
  return { mode, secrets: [...secrets] };
}

/** Parses a mode from text: `off`, `transitional` or `required`. */
export function parseGossipAuth(text: string): GossipAuthMode {
  const t = typeof text === "string" ? text.trim().toLowerCase() : "";
  if (t === "off" || t === "transitional" || t === "required") return t;
  throw new TypeError(
    `unknown gossip auth mode ${describe(text)}: expected off, transitional or required`,
  );
}

/** A computed MAC: sync in the simulator, async with Web Crypto. */
export type Mac = (secret: Secret, data: Uint8Array) => Uint8Array | Promise<Uint8Array>;

/** What to do with a received datagram: take these bytes, or drop it for a reason. */
export type Verdict =
  | { readonly accept: true; readonly bytes: Uint8Array }
  | { readonly accept: false; readonly reason: "unsigned" | "badTag" };

/**
 * Judges a received datagram under `config`: which secrets to try, and the
 * verdict once the tags are known. Split in two so that the caller can
 * compute the tags synchronously or not.
 */
export function judge(
  config: AuthConfig,
  datagram: Uint8Array,
  mac: Mac,
): Verdict | Promise<Verdict> {
  const signed = splitSigned(datagram);
  if (signed === undefined) {
    if (config.mode === "off") return { accept: true, bytes: datagram };
    // Claiming a tag with no room for one is a bad tag, not an unsigned datagram.
    if (datagram.length > 1 && datagram[1] & FLAG_SIGNED) {
      return { accept: false, reason: "badTag" };
    }
    return config.mode === "required"
      ? { accept: false, reason: "unsigned" }
      : { accept: true, bytes: datagram };
  }
  if (config.mode === "off") return { accept: true, bytes: datagram };
  const tags = config.secrets.map((s) => mac(s, signed.covered));
  const decide = (computed: Uint8Array[]): Verdict =>
    computed.some((t) => sameTag(t, signed.tag))
      ? { accept: true, bytes: datagram }
      : { accept: false, reason: "badTag" };
  return tags.every((t) => t instanceof Uint8Array)
    ? decide(tags as Uint8Array[])
    : Promise.all(tags).then(decide);
}

/** The datagram to send under `config`: as it is, or signed with the first secret. */
export function seal(
  config: AuthConfig,
  message: Uint8Array,
  mac: Mac,
): Uint8Array | Promise<Uint8Array> {
  if (config.mode === "off") return message;
  const out = prepareSigned(message);
  const covered = out.subarray(0, message.length);
  const tag = mac(config.secrets[0], covered);
  const place = (t: Uint8Array) => {
    out.set(t.subarray(0, TAG_BYTES), message.length);
    return out;
  };
  return tag instanceof Uint8Array ? place(tag) : tag.then(place);
}

/** Constant-time comparison of the first 16 bytes of a computed tag with a received one. */
function sameTag(computed: Uint8Array, received: Uint8Array): boolean {
  if (computed.length < TAG_BYTES || received.length !== TAG_BYTES) return false;
  let diff = 0;
  for (let i = 0; i < TAG_BYTES; i++) diff |= computed[i] ^ received[i];
  return diff === 0;
}
