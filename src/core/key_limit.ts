/**
 * A key's limit by reference: "as in that class", so a key follows a
 * class's limit (and its shadow) as the class changes, where a `Limit` of
 * its own (`limit.ts`) stays as it was set. And the one test of a class's
 * name, which such a reference and every class setter take.
 *
 * @module
 */

import { describe } from "./describe.ts";

/**
 * A limit for one key: its own {@link Limit}, or "as in that class", so a key
 * follows a class's limit (and its shadow) as the class changes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { KeyLimit } from "@rateguard/guard";
 * const followsPro = KeyLimit.class("pro");
 * assert(followsPro.className === "pro");
 * ```
 */
export class KeyLimit {
  /** The class whose limit the key follows. */
  readonly className: string;

  private constructor(className: string) {
    this.className = className;
  }

  /**
   * The key is held to the limit of class `name`, whatever it is then.
   *
   * @param name The class (`""`: the default class).
   * @returns The key limit.
   * @throws {TypeError} when `name` is not a string.
   */
  static class(name: string): KeyLimit {
    return new KeyLimit(checkClassName(name, "KeyLimit.class"));
  }

  /**
   * `class:pro`.
   *
   * @returns `class:` and the class's name.
   */
  toString(): string {
    return `class:${this.className}`;
  }

  /**
   * What Node's and Bun's inspectors print.
   *
   * @returns `KeyLimit(class "pro")`.
   */
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return shown(this);
  }

  /**
   * What Deno's inspector prints: as Node's.
   *
   * @returns `KeyLimit(class "pro")`.
   */
  [Symbol.for("Deno.customInspect")](): string {
    return shown(this);
  }
}

/** How the inspectors print a key limit: the one form for Deno's and Node's alike. */
function shown(limit: KeyLimit): string {
  return `KeyLimit(class ${JSON.stringify(limit.className)})`;
}

/** Validates a class name: a string (`""` is the default class). */
export function checkClassName(name: unknown, what: string): string {
  if (typeof name !== "string") {
    throw new TypeError(`${what}: a class name must be a string, got ${describe(name)}`);
  }
  return name;
}
