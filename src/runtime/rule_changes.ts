/**
 * What a bulk change of the book changed, rule by rule, for the fleet:
 * `setClasses`, `setKeyLimits` and `setShadows` replace a whole part of
 * the book, and each rule that appeared, changed or went is one change the
 * fleet's table orders on its own.
 *
 * @module
 */

import type { RuleChange } from "../core/fleet_node.ts";
import type { ClassEntry, KeyLimitEntry, LimitBook, ShadowEntry } from "../core/rules.ts";
import { sameValue } from "../core/rules_sync/entry.ts";

/** A snapshot of the parts of a book that bulk setters replace. */
export interface BookParts {
  readonly classes: readonly ClassEntry[];
  readonly shadows: readonly ShadowEntry[];
  readonly keyLimits: readonly KeyLimitEntry[];
}

/** The parts of `book` now. */
export function bookParts(book: LimitBook): BookParts {
  return { classes: book.classes(), shadows: book.shadows(), keyLimits: book.keyLimits() };
}

/**
 * The changes from `before` to `after`: each rule set anew or to another
 * value, and each rule gone (a removal).
 *
 * @param before The book's parts before.
 * @param after The book's parts after.
 * @returns The changes, classes first (a shadow applies only to a class held).
 */
export function changesBetween(before: BookParts, after: BookParts): RuleChange[] {
  const changes: RuleChange[] = [];
  const diff = (
    kind: RuleChange["kind"],
    was: readonly (readonly [string, string, RuleChange["value"]])[],
    now: readonly (readonly [string, string, RuleChange["value"]])[],
  ) => {
    const id = (className: string, key: string) => `${className.length}:${className}${key}`;
    const old = new Map(was.map(([c, k, v]) => [id(c, k), v]));
    const seen = new Set<string>();
    for (const [className, key, value] of now) {
      const at = id(className, key);
      seen.add(at);
      if (!old.has(at) || !sameValue(old.get(at), value)) {
        changes.push({ kind, className, key, value });
      }
    }
    for (const [className, key] of was) {
      if (!seen.has(id(className, key))) changes.push({ kind, className, key, value: undefined });
    }
  };
  const named = (entries: readonly (readonly [string, RuleChange["value"]])[]) =>
    entries.map(([name, value]) => [name, "", value] as const);
  diff("class", named(before.classes), named(after.classes));
  diff("shadow", named(before.shadows), named(after.shadows));
  diff("keyLimit", before.keyLimits, after.keyLimits);
  return changes;
}
