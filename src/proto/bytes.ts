/**
 * Big-endian numbers read and written by bytes. A `DataView` made for each
 * datagram written or read (and for each section in it) cost more than the
 * shifts, and in JavaScriptCore asking a typed array of its own for its
 * `buffer`, as a view needs, moves its bytes out of the heap first.
 *
 * @module
 */

/** Writes the low 16 bits of `value` at `at`. */
export function setU16(bytes: Uint8Array, at: number, value: number): void {
  bytes[at] = value >>> 8;
  bytes[at + 1] = value;
}

/** Writes the low 32 bits of `value` at `at`. */
export function setU32(bytes: Uint8Array, at: number, value: number): void {
  bytes[at] = value >>> 24;
  bytes[at + 1] = value >>> 16;
  bytes[at + 2] = value >>> 8;
  bytes[at + 3] = value;
}

/** The unsigned 16-bit integer at `at`. */
export function getU16(bytes: Uint8Array, at: number): number {
  return (bytes[at] << 8) | bytes[at + 1];
}

/** The unsigned 32-bit integer at `at`. */
export function getU32(bytes: Uint8Array, at: number): number {
  return ((bytes[at] << 24) | (bytes[at + 1] << 16) | (bytes[at + 2] << 8) | bytes[at + 3]) >>> 0;
}

/** Four bytes to turn into a float: one view, made once. */
const F32 = new DataView(new ArrayBuffer(4));

/** The 32-bit float at `at`, its bits as they are. */
export function getF32(bytes: Uint8Array, at: number): number {
  F32.setUint32(0, getU32(bytes, at));
  return F32.getFloat32(0);
}
