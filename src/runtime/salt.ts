/**
 * The key salt, turned into the key of the 64-bit key hashes. SipHash takes
 * a 16-byte key; a salt may be longer, and every byte of it must count with
 * no two salts sharing a key by construction (folding by XOR would send any
 * salt of the form X‖X to the all-zero key). So the key is the first 16
 * bytes of the salt's SHA-256, computed with Web Crypto here in the runtime:
 * the core takes the derived key and does no cryptography.
 *
 * @module
 */

import { type HashKey, hashKey } from "../core/hash.ts";
import { MIN_SALT_BYTES } from "../core/auth.ts";
import { describe } from "../core/limit.ts";

/** Validates a key salt (bytes, at least 16) and returns a copy of it. */
export function checkSalt(bytes: Uint8Array, what: string): Uint8Array<ArrayBuffer> {
  if (!(bytes instanceof Uint8Array)) {
    throw new TypeError(`${what}: expected bytes (a Uint8Array), got ${describe(bytes)}`);
  }
  if (bytes.length < MIN_SALT_BYTES) {
    throw new RangeError(
      `${what}: a salt needs at least ${MIN_SALT_BYTES} bytes, got ${bytes.length}`,
    );
  }
  return bytes.slice();
}

/**
 * The SipHash key a guard built with `keySalt(salt)` hashes keys with: the
 * first 16 bytes of SHA-256 over the whole salt. For an `Enforcer` of
 * `@rateguard/guard/core` that must hash keys as such a guard does.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Guard, saltHashKey } from "@rateguard/guard";
 * import { keyHash } from "@rateguard/guard/core";
 *
 * const salt = new Uint8Array(32).fill(7);
 * const guard = await Guard.builder().limit(10).keySalt(salt).spawn();
 * assert(keyHash(await saltHashKey(salt), "", "tenant:42") === guard.keyHashIn("", "tenant:42"));
 * ```
 */
export async function saltHashKey(salt: Uint8Array): Promise<HashKey> {
  const bytes = checkSalt(salt, "saltHashKey");
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return hashKey(digest.subarray(0, 16));
}
