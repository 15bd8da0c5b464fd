/**
 * How long a key or a class name may be, in bytes of UTF-8: the default
 * and the most `maxKeyBytes` may be, the test of a text against it, and
 * the error of one too long. The book checks every key it is given against
 * it, and it alone: the sidecar reads which field was too long off the
 * error ({@link KeyBytesError}) rather than measuring the key again. What
 * one tracked key can cost in memory for its name is bounded by it.
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

/**
 * A key or a class name longer than `maxKeyBytes`: a `RangeError` (its
 * name and message are a RangeError's, `what: a key is at most ...`) that
 * also says which of the two it was and, in a list of them, at which
 * item, so that a caller who reads them from a request (the sidecar) names
 * the field at fault without measuring either again.
 */
export class KeyBytesError extends RangeError {
  /** Which was too long: the key, or the class name. */
  readonly part: "key" | "class";
  /** Where in the list given (a batch, a table of key limits) it was; undefined for one. */
  readonly item: number | undefined;
  /** Why, without the method's name: {@link tooLongMessage}'s text. */
  readonly detail: string;

  /**
   * The refusal of `text` by `what`, at `item` of a list.
   *
   * @param what The method refusing it, named first in the message.
   * @param part Which was too long.
   * @param text The key or class name.
   * @param max The bound, `maxKeyBytes`.
   * @param item Where in a list it was, if in one.
   */
  constructor(
    what: string,
    part: "key" | "class",
    text: string,
    max: number,
    item: number | undefined,
  ) {
    const detail = tooLongMessage(part === "key" ? "key" : "class name", text, max);
    super(`${what}: ${detail}`);
    this.part = part;
    this.item = item;
    this.detail = detail;
  }
}

/** Validates a value for `maxKeyBytes`: the one place its bounds are checked. */
export function checkMaxKeyBytes(n: number): number {
  return checkOption("maxKeyBytes", n);
}
