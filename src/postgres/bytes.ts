/**
 * Byte helpers shared by the ledger's modules (not exported from the package).
 *
 * @module
 */

/** Lowercase hex of `bytes`, the form PostgreSQL's `decode(…, 'hex')` reads. */
export function toHex(bytes: Uint8Array): string {
  let hex = "";
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0");
  return hex;
}

/** UTF-8 bytes of a string, or the bytes themselves. */
export function utf8(value: string | Uint8Array): Uint8Array {
  return typeof value === "string" ? new TextEncoder().encode(value) : value;
}
