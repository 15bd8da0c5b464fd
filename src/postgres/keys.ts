/**
 * Subject keys: what the ledger stores instead of the subject itself.
 *
 * @module
 */

import { toHex, utf8 } from "./bytes.ts";
import type { FixedWindowPolicy } from "./policy.ts";

/** The shortest secret {@link KeyHasher} accepts, in bytes (256 bits). */
export const MIN_SECRET_BYTES = 32;

const DOMAIN = utf8("rateguard/subject/v1\0");

/**
 * Turns subjects (an email, an account id, an IP address, as the application
 * normalized it) into 32-byte keys with HMAC-SHA256, so raw identities never
 * reach the database, its logs or an error message.
 *
 * Keys are domain-separated by policy id and scope: the same subject under
 * two policies gives unrelated keys, so a reader of the table cannot link a
 * person's rows across quotas. Every replica sharing a ledger must use the
 * same secret; rotating it starts fresh counters.
 *
 * The secret is imported as a non-extractable Web Crypto key and not kept
 * otherwise, so a hasher cannot leak it through logging or serialization.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { FixedWindowPolicy, KeyHasher } from "@rateguard/guard/postgres";
 *
 * const hasher = await KeyHasher.fromSecret(crypto.getRandomValues(new Uint8Array(32)));
 * const policy = new FixedWindowPolicy({ id: "api", scope: "user", limit: 10, windowMs: 1_000 });
 * const key = await hasher.hashFor(policy, "user@example.test");
 * assert(key.length === 32);
 * ```
 */
export class KeyHasher {
  readonly #key: CryptoKey;

  private constructor(key: CryptoKey) {
    this.#key = key;
  }

  /**
   * A hasher for `secret`: random bytes from secret storage, at least
   * {@link MIN_SECRET_BYTES} of them (a string counts its UTF-8 bytes).
   *
   * @throws {TypeError} when the secret is neither a string nor bytes.
   * @throws {RangeError} when it is shorter than 32 bytes (its length is
   *   named, its content never is).
   *
   * @param secret The secret, bytes or a string (its UTF-8).
   * @returns A promise of the hasher.
   */
  static async fromSecret(secret: string | Uint8Array): Promise<KeyHasher> {
    if (typeof secret !== "string" && !(secret instanceof Uint8Array)) {
      throw new TypeError(`KeyHasher.fromSecret: secret must be a string or a Uint8Array`);
    }
    const bytes = utf8(secret);
    if (bytes.length < MIN_SECRET_BYTES) {
      throw new RangeError(
        `KeyHasher.fromSecret: secret must have at least ${MIN_SECRET_BYTES} bytes, got ${bytes.length}`,
      );
    }
    // A copy: importKey may read the buffer after the caller wiped theirs.
    const key = await crypto.subtle.importKey(
      "raw",
      bytes.slice(),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    return new KeyHasher(key);
  }

  /**
   * The 32-byte key the ledger stores for `subject` under `policy`.
   *
   * @throws {TypeError} when the subject is empty or neither a string nor
   *   bytes (its content is never echoed).
   *
   * @param policy The quota policy.
   * @param subject Whom it limits: a tenant, a user, an API key.
   * @returns A promise of the 32-byte HMAC.
   */
  async hashFor(policy: FixedWindowPolicy, subject: string | Uint8Array): Promise<Uint8Array> {
    const message = subjectMessage(policy, subject);
    return new Uint8Array(await crypto.subtle.sign("HMAC", this.#key, message));
  }

  /**
   * {@link hashFor} as 64 lowercase hex digits, as the ledger sends it.
   *
   * @param policy The quota policy.
   * @param subject Whom it limits.
   * @returns A promise of the hex digits.
   * @throws {TypeError} as {@link KeyHasher.hashFor}.
   */
  async hexFor(policy: FixedWindowPolicy, subject: string | Uint8Array): Promise<string> {
    return toHex(await this.hashFor(policy, subject));
  }
}

// domain ‖ len(id) ‖ id ‖ len(scope) ‖ scope ‖ subject. Lengths make the
// encoding prefix-free, so no (policy, subject) pair can collide with
// another by moving bytes across the boundary; names are at most 64 ASCII
// characters, so one byte holds each length.
function subjectMessage(
  policy: FixedWindowPolicy,
  subject: string | Uint8Array,
): Uint8Array<ArrayBuffer> {
  if (typeof subject !== "string" && !(subject instanceof Uint8Array)) {
    throw new TypeError(`subject must be a string or a Uint8Array, got ${typeof subject}`);
  }
  const body = utf8(subject);
  if (body.length === 0) throw new TypeError("subject must not be empty");
  const id = utf8(policy.id);
  const scope = utf8(policy.scope);
  const message = new Uint8Array(DOMAIN.length + 2 + id.length + scope.length + body.length);
  let at = 0;
  message.set(DOMAIN, at);
  at += DOMAIN.length;
  message[at++] = id.length;
  message.set(id, at);
  at += id.length;
  message[at++] = scope.length;
  message.set(scope, at);
  at += scope.length;
  message.set(body, at);
  return message;
}
