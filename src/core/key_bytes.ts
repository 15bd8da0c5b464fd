/**
 * How long a key or a class name may be, in bytes of UTF-8: the default
 * and the most `maxKeyBytes` may be, and the test of a text against it.
 * The book checks every key it is given against it, and the sidecar's body
 * parser checks keys before they reach a guard; what one tracked key can
 * cost in memory for its name is bounded by it.
 *
 * @module
 */

import { checkOption, GUARD_BOUNDS } from "./options.ts";
import { utf8Length } from "./hash.ts";

/**
 * The longest key (and class name) by default, in bytes of UTF-8: what one
 * tracked key can cost in memory for its name is bounded by it.
 */
export const DEFAULT_MAX_KEY_BYTES: number = GUARD_BOUNDS.maxKeyBytes.default;
/** The most `maxKeyBytes` may be: a sidecar request body is no larger. */
export const MAX_KEY_BYTES_LIMIT: number = GUARD_BOUNDS.maxKeyBytes.max;

/** Whether `text` takes at most `max` bytes of UTF-8; measured only if it might not. */
export function fitsKeyBytes(text: string, max: number): boolean {
  // A code unit takes at most three bytes, and at least one: a short text
  // surely fits and a long one surely does not, with no walk over either.
  return text.length * 3 <= max || (text.length <= max && utf8Length(text) <= max);
}

/** Why a key or class name is refused for its length, naming the limit. */
export function tooLongMessage(noun: "key" | "class name", text: string, max: number): string {
  return `a ${noun} is at most ${max} bytes of UTF-8 (maxKeyBytes), got ${utf8Length(text)}`;
}

/** Validates a value for `maxKeyBytes`: the one place its bounds are checked. */
export function checkMaxKeyBytes(n: number): number {
  return checkOption("maxKeyBytes", n);
}
