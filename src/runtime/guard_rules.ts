/**
 * A guard's rules (its part behind `setLimit`, `setClass`, `setKeyLimit`,
 * `setShadow`, `setDryRun`, the bulk setters and their readers): each
 * change is made in its book and, when the guard shares rules, passed to
 * the fleet. A bulk change
 * (`setClasses`, `setKeyLimits`, `setShadows`) replaces a whole part of
 * the book, and each rule that appeared, changed or went is one change the
 * fleet's table orders on its own.
 *
 * @module
 */

import type { Enforcer } from "../core/enforcer.ts";
import type { RuleChange } from "../core/fleet_node.ts";
import type { KeyLimit } from "../core/key_limit.ts";
import type { Limit } from "../core/limit.ts";
import { classOf, type KeyOptions } from "../core/options.ts";
import type { ClassEntry, KeyLimitEntry, LimitBook, ShadowEntry } from "../core/rules.ts";
import { sameValue } from "../core/rules_sync/entry.ts";
import type { Clock } from "./clock.ts";
import type { GossipTask } from "./gossip.ts";

/**
 * A guard's rules, behind its methods of the same names (whose
 * documentation says what each takes and throws): a change goes to the
 * book, then to the fleet; a read is the book's.
 */
export class GuardRules {
  readonly #book: LimitBook;
  readonly #enforcer: Enforcer;
  readonly #gossip: GossipTask | undefined;
  readonly #clock: Clock;

  constructor(parts: {
    readonly book: LimitBook;
    readonly enforcer: Enforcer;
    readonly gossip?: GossipTask;
    readonly clock: Clock;
  }) {
    this.#book = parts.book;
    this.#enforcer = parts.enforcer;
    this.#gossip = parts.gossip;
    this.#clock = parts.clock;
  }

  setLimit(limit: Limit): void {
    this.#admit("defaultLimit", "", "");
    this.#book.setLimit(limit);
    this.#share({ kind: "defaultLimit", className: "", key: "", value: limit });
  }

  setClass(name: string, limit: Limit): void {
    this.#admit("class", name, "");
    this.#book.setClass(name, limit);
    this.#share({ kind: "class", className: name, key: "", value: limit });
  }

  removeClass(name: string): boolean {
    const shadowed = this.#book.shadows().some(([c]) => c === name);
    const had = this.#book.removeClass(name);
    if (!had) return false;
    this.#share({ kind: "class", className: name, key: "", value: undefined });
    // The book drops the class's shadow with it; the fleet's table holds it apart.
    if (shadowed) this.#share({ kind: "shadow", className: name, key: "", value: undefined });
    return true;
  }

  setClasses(entries: Iterable<ClassEntry>): void {
    this.#bulk(() => this.#book.setClasses(entries));
  }

  setKeyLimit(key: string, limit: Limit | KeyLimit, options: KeyOptions | undefined): void {
    if (typeof limit === "string") {
      // The class-first order of 0.2.0: (className, key, limit).
      throw new TypeError(
        `setKeyLimit(key, limit, { class }) takes the key first, then its limit; got the string ${
          JSON.stringify(limit)
        } as the limit`,
      );
    }
    const className = classOf(options, "setKeyLimit");
    this.#admit("keyLimit", className, key);
    this.#book.setKeyLimit(className, key, limit);
    this.#share({ kind: "keyLimit", className, key, value: limit });
  }

  removeKeyLimit(key: string, options: KeyOptions | undefined): boolean {
    const className = classOf(options, "removeKeyLimit");
    const had = this.#book.removeKeyLimit(className, key);
    if (had) this.#share({ kind: "keyLimit", className, key, value: undefined });
    return had;
  }

  setKeyLimits(entries: Iterable<KeyLimitEntry>): void {
    this.#bulk(() => this.#book.setKeyLimits(entries));
  }

  setShadow(className: string, limit: Limit | null): void {
    this.#admit("shadow", className, "");
    this.#book.setShadow(className, limit);
    this.#share({ kind: "shadow", className, key: "", value: limit ?? undefined });
  }

  setShadows(entries: Iterable<ShadowEntry>): void {
    this.#bulk(() => this.#book.setShadows(entries));
  }

  limitFor(key: string, options: KeyOptions | undefined): Limit {
    const className = options?.class ?? "";
    this.#book.checkKey(className, key, "limitFor");
    return this.#book.resolve(className, key).limit;
  }

  classes(): ClassEntry[] {
    return this.#book.classes();
  }

  keyLimits(): KeyLimitEntry[] {
    return this.#book.keyLimits();
  }

  shadows(): ShadowEntry[] {
    return this.#book.shadows();
  }

  setDryRun(on: boolean): void {
    if (typeof on !== "boolean") {
      throw new TypeError(`setDryRun: expected a boolean, got ${typeof on}`);
    }
    this.#admit("dryRun", "", "");
    this.#enforcer.dryRun = on;
    this.#share({ kind: "dryRun", className: "", key: "", value: on });
  }

  /**
   * Refuses, before anything is made here, a change the fleet's table has
   * no room for: here and the fleet then agree it was not made.
   */
  #admit(kind: RuleChange["kind"], className: string, key: string): void {
    this.#gossip?.node.admitRule({ kind, className, key });
  }

  /** Passes changes made here to the fleet, when it shares rules. */
  #share(change: RuleChange): void {
    this.#gossip?.node.shareRule(this.#clock(), change);
  }

  /** Runs a change of many rules, then passes each rule it changed to the fleet. */
  #bulk<T>(change: () => T): T {
    const node = this.#gossip?.node;
    if (!node?.sharesRules) return change();
    const before = bookParts(this.#book);
    const result = change();
    const changes = changesBetween(before, bookParts(this.#book));
    try {
      node.admitRules(changes);
    } catch (e) {
      // Put the book back as it was: a bulk change the fleet cannot take is made nowhere.
      this.#book.setClasses(before.classes);
      this.#book.setShadows(before.shadows);
      this.#book.setKeyLimits(before.keyLimits);
      throw e;
    }
    const nowMs = this.#clock();
    for (const c of changes) node.shareRule(nowMs, c);
    return result;
  }
}

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
  // A class's removal removes its key limits on every member, as one rule:
  // its key limits' removals need not travel too.
  const gone = new Set(
    changes.filter((c) => c.kind === "class" && c.value === undefined).map((c) => c.className),
  );
  const kept = (entries: BookParts["keyLimits"]) => entries.filter(([c]) => !gone.has(c));
  diff("keyLimit", kept(before.keyLimits), kept(after.keyLimits));
  return changes;
}
