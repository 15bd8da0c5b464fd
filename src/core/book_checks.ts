/**
 * What the book of limits (`rules.ts`) refuses, in the words and error
 * types its callers rely on: a class name and a key, by type and by length
 * in bytes of UTF-8 (the check every method taking a key runs, through
 * `LimitBook.checkKey`: the guard's public contract), a key limit that is
 * neither a limit nor a class's, and the book's bounds and unknown classes.
 * The length bound itself, its message and its error ({@link KeyBytesError},
 * which the sidecar maps to the field at fault) are `key_bytes.ts`'s.
 *
 * @module
 */

import { RateguardError } from "./errors.ts";
import { describe } from "./describe.ts";
import { checkClassName, KeyLimit } from "./key_limit.ts";
import { Limit } from "./limit.ts";
import { fitsKeyBytes, KeyBytesError } from "./key_bytes.ts";

/**
 * A class name and a key as every method taking them wants them: a string
 * and a non-empty string, each at most `maxKeyBytes` bytes of UTF-8; `item`
 * is where the pair is in a list the caller was given, if in one.
 *
 * @throws {TypeError} when the class is not a string or the key not a non-empty string.
 * @throws {KeyBytesError} (a `RangeError`) when either is longer than `maxKeyBytes` bytes of UTF-8.
 */
export function checkClassAndKey(
  className: unknown,
  key: unknown,
  what: string,
  maxKeyBytes: number,
  item?: number,
): void {
  checkClassName(className, what);
  checkKeyType(key, what);
  if (!fitsKeyBytes(key as string, maxKeyBytes)) {
    throw new KeyBytesError(what, "key", key as string, maxKeyBytes, item);
  }
  checkNameBytes(className as string, what, maxKeyBytes, item);
}

/** Validates a key's type: a non-empty string; its length is the book's to check. */
function checkKeyType(key: unknown, what: string): string {
  if (typeof key !== "string" || key.length === 0) {
    throw new TypeError(`${what}: a key must be a non-empty string, got ${describe(key)}`);
  }
  return key;
}

/** The one bound of a class name, wherever it is given: what a check would refuse is refused here too. */
export function checkNameBytes(
  name: string,
  what: string,
  maxKeyBytes: number,
  item?: number,
): void {
  if (!fitsKeyBytes(name, maxKeyBytes)) {
    throw new KeyBytesError(what, "class", name, maxKeyBytes, item);
  }
}

/** A class to make: a name other than the default's, that checks can then name. */
export function checkNamed(name: string, what: string, maxKeyBytes: number): void {
  checkClassName(name, what);
  if (name === "") {
    throw new RangeError(`${what}: "" is the default class; change it with setLimit`);
  }
  checkNameBytes(name, what, maxKeyBytes);
}

/** A key's own limit: a `Limit`, or `KeyLimit.class(name)`. */
export function checkSpec(limit: unknown, what: string): void {
  if (!(limit instanceof Limit) && !(limit instanceof KeyLimit)) {
    throw new TypeError(
      `${what}: expected a Limit or KeyLimit.class(name), got ${describe(limit)}`,
    );
  }
}

/** A new class past `maxClasses`. */
export function tooManyClasses(max: number): RateguardError {
  return new RateguardError(
    "TooManyClasses",
    `too many classes: this instance keeps at most ${max} (maxClasses)`,
  );
}

/** A new key limit past `maxKeyLimits`; `count` when a whole listing of that many is refused. */
export function tooManyKeyLimits(max: number, count?: number): RateguardError {
  return new RateguardError(
    "TooManyKeyLimits",
    count === undefined
      ? `cannot add a key limit: this instance keeps at most ${max} (maxKeyLimits)`
      : `setKeyLimits: ${count} key limits, more than the ${max} this instance keeps (maxKeyLimits)`,
  );
}

/** A class named that this instance does not have. */
export function unknownClass(name: string): RateguardError {
  return new RateguardError(
    "UnknownClass",
    `no class named ${JSON.stringify(name)} on this instance`,
  );
}
