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
import { checkSalt } from "../core/option_checks.ts";

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
 * assert(keyHash(await saltHashKey(salt), "", "tenant:42") === guard.keyHash("tenant:42"));
 * ```
 *
 * @param salt The salt, at least 16 bytes.
 * @returns A promise of the 16-byte SipHash key.
 * @throws {TypeError} when `salt` is not a `Uint8Array` (as a rejection).
 * @throws {RangeError} when it is shorter than 16 bytes (as a rejection).
 */
export async function saltHashKey(salt: Uint8Array): Promise<HashKey> {
  const bytes = checkSalt(salt, "saltHashKey");
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return hashKey(digest.subarray(0, 16));
}
