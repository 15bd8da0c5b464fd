/**
 * The gossip MAC with Web Crypto: HMAC-SHA256 under a secret. Keys are
 * imported once per secret and kept beside it.
 *
 * @module
 */

import type { Secret } from "../core/auth.ts";

const keys = new WeakMap<Secret, Promise<CryptoKey>>();

/** HMAC-SHA256 of `data` under `secret`, with Web Crypto (`crypto.subtle`). */
export async function webCryptoMac(secret: Secret, data: Uint8Array): Promise<Uint8Array> {
  let key = keys.get(secret);
  if (key === undefined) {
    key = crypto.subtle.importKey(
      "raw",
      secret.reveal(),
      { name: "HMAC", hash: "SHA-256" },
      false,
      [
        "sign",
      ],
    );
    keys.set(secret, key);
  }
  // A copy, so that Web Crypto gets a view of a plain ArrayBuffer.
  return new Uint8Array(await crypto.subtle.sign("HMAC", await key, data.slice()));
}
