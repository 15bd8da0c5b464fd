/**
 * The book of limits: the default class, named classes, limits for single
 * keys, and shadows, with the resolution of a (class, key) pair into the
 * {@link Rule} its checks run under.
 *
 * Every change bumps `epoch`. A key's slot remembers the epoch its rule was
 * resolved at and resolves again on its next check after a change: one
 * integer comparison per check buys live changes with no sweep of the table
 * and no fresh burst for a key whose limit moved. What the book refuses,
 * and in what words, is `book_checks.ts`'s.
 *
 * Why this file is over 400 lines: it is one table, the book, with the one
 * reading of it that checks run under. What was set (the default, classes,
 * key limits, shadows), the fraction of it this instance admits (scale,
 * shared bursts) and the cache of rules resolved from both change under
 * one `epoch`, and only this class writes them: every setter, of a limit
 * or of the scale, clears that one cache and bumps that one epoch. Split
 * in two, the cache would gain a second writer, or one half a face
 * forwarding every method of the other, since its callers (the enforcer,
 * the allocator, the guard, the simulator) hold one book.
 *
 * @module
 */

import { checkClassName, type KeyLimit } from "./key_limit.ts";
import { checkLimit, Limit } from "./limit.ts";
import { type Rule, ruleOf, sharesBurstAt } from "./rule.ts";
import { COLD_FRACTION } from "./options.ts";
import { checkMaxKeyBytes, DEFAULT_MAX_KEY_BYTES } from "./key_bytes.ts";
import {
  checkClassAndKey,
  checkNameBytes,
  checkNamed,
  checkSpec,
  tooManyClasses,
  tooManyKeyLimits,
  unknownClass,
} from "./book_checks.ts";

// The enforcer, the allocator and the simulator's figures take these from
// the book's module, where they were first written.

/** Bounds of the book, from the builder. */
export interface LimitBookOptions {
  /** Named classes kept at most. */
  readonly maxClasses: number;
  /** Limits for single keys kept at most. */
  readonly maxKeyLimits: number;
  /**
   * The longest key or class name, in bytes of UTF-8.
   * @default {1024}
   */
  readonly maxKeyBytes?: number;
}

/** How a key is limited on its own: its own limit, or a class's. */
export type KeyLimitSpec = Limit | KeyLimit;

/** A class with its limit, for {@link LimitBook.setClasses}. */
export type ClassEntry = readonly [name: string, limit: Limit];
/** A key limit, for {@link LimitBook.setKeyLimits}. */
export type KeyLimitEntry = readonly [className: string, key: string, limit: KeyLimitSpec];
/** A shadow, for {@link LimitBook.setShadows}. */
export type ShadowEntry = readonly [className: string, limit: Limit];

/** The limits one instance enforces, and the rules they resolve to. */
export class LimitBook {
  /** Bumped on every change; slots compare it to know their rule is stale. */
  epoch = 0;
  #default: Limit;
  #classes = new Map<string, Limit>();
  #shadows = new Map<string, Limit>();
  #keyLimits = new Map<string, Map<string, KeyLimitSpec>>();
  #keyLimitCount = 0;
  #rules = new Map<string, Rule>();
  #unknown: Rule | undefined;
  #scale = 1;
  #sharedBurst: boolean | undefined = false;
  #fleetSize = 1;
  #alpha = COLD_FRACTION;
  readonly #options: LimitBookOptions;
  readonly #maxKeyBytes: number;

  /**
   * A book with `defaultLimit` for the default class `""`.
   *
   * @param defaultLimit The default class's limit.
   * @param options The bounds of the book.
   * @throws {TypeError} when `defaultLimit` is not a {@link Limit}.
   */
  constructor(defaultLimit: Limit, options: LimitBookOptions) {
    this.#default = checkLimit(defaultLimit, "the default limit");
    this.#options = options;
    this.#maxKeyBytes = checkMaxKeyBytes(options.maxKeyBytes ?? DEFAULT_MAX_KEY_BYTES);
  }

  /** Named classes kept at most. */
  get maxClasses(): number {
    return this.#options.maxClasses;
  }

  /** Limits for single keys kept at most. */
  get maxKeyLimits(): number {
    return this.#options.maxKeyLimits;
  }

  /** The longest key or class name, in bytes of UTF-8. */
  get maxKeyBytes(): number {
    return this.#maxKeyBytes;
  }

  /**
   * Validates a class name and a key as every method taking them does: a
   * string and a non-empty string, each at most {@link maxKeyBytes} bytes
   * of UTF-8. Throws a `TypeError` or a `RangeError` naming `what`; the
   * `RangeError` also says which was too long, and `item` (see
   * `KeyBytesError` in `key_bytes.ts`: the one check of their length,
   * which the sidecar maps to the field at fault).
   *
   * @param className The class name to check.
   * @param key The key to check.
   * @param what The method, named in the error.
   * @param item Where the pair is in a list the method was given, if in one.
   * @throws {TypeError} when the class is not a string or the key not a non-empty string.
   * @throws {RangeError} when either is longer than `maxKeyBytes` bytes of UTF-8.
   */
  checkKey(className: unknown, key: unknown, what: string, item?: number): void {
    checkClassAndKey(className, key, what, this.#maxKeyBytes, item);
  }

  /**
   * The fraction of each limit that resolved rules admit on this instance:
   * 1 for a standalone guard; in a fleet, the cold share α/N, or the floor
   * β/N while every key is held.
   */
  get scale(): number {
    return this.#scale;
  }

  /**
   * Sets {@link scale}; every key's rule follows on its next check.
   *
   * @param scale The fraction of each limit admitted here, more than 0, at most 1.
   * @throws {RangeError} when `scale` is outside that range.
   */
  setScale(scale: number): void {
    if (!(scale > 0 && scale <= 1)) throw new RangeError(`a scale must be in (0, 1], got ${scale}`);
    if (scale === this.#scale) return;
    this.#scale = scale;
    this.#changed();
  }

  /**
   * Whether each rule's burst follows its share (`sharedBurstOf`), so
   * that the fleet's bursts add up to one limit's burst rather than one on
   * every instance; off, every instance admits the whole burst; undefined,
   * as the fleet's size says for each limit ({@link sharesBurst}).
   */
  get sharedBurst(): boolean | undefined {
    return this.#sharedBurst;
  }

  /**
   * Sets {@link sharedBurst}; every key's rule follows on its next check.
   *
   * @param on Whether bursts follow shares; undefined: as the fleet's size says.
   */
  setSharedBurst(on: boolean | undefined): void {
    if (on === this.#sharedBurst) return;
    this.#sharedBurst = on;
    this.#changed();
  }

  /**
   * Sets the fleet's size that {@link sharesBurst} follows when
   * {@link sharedBurst} is not set; every key's rule follows on its next check.
   *
   * @param n The counted members, this one included, at least 1.
   * @param alpha The cold fraction α.
   */
  setFleetSize(n: number, alpha: number = COLD_FRACTION): void {
    if (n === this.#fleetSize && alpha === this.#alpha) return;
    this.#fleetSize = n;
    this.#alpha = alpha;
    if (this.#sharedBurst === undefined) this.#changed();
  }

  /**
   * Whether `limit`'s burst follows this instance's share: as
   * {@link sharedBurst} says, or, where it is not set, when a burst on each
   * of the fleet's instances would be more than the headroom the cold
   * fraction leaves below the limit for a second (`sharesBurstAt`).
   *
   * @param limit The limit.
   * @returns Whether its burst is shared.
   */
  sharesBurst(limit: Limit): boolean {
    return this.#sharedBurst ?? sharesBurstAt(limit, this.#fleetSize, this.#alpha);
  }

  /**
   * The default class's limit.
   *
   * @returns The limit.
   */
  defaultLimit(): Limit {
    return this.#default;
  }

  /**
   * Sets the default class's limit.
   *
   * @param limit The new limit.
   * @throws {TypeError} when `limit` is not a {@link Limit}.
   */
  setLimit(limit: Limit): void {
    this.#default = checkLimit(limit, "setLimit");
    this.#changed();
  }

  /**
   * The named classes, in the order they were added.
   *
   * @returns A fresh array of `[name, limit]`.
   */
  classes(): ClassEntry[] {
    return [...this.#classes];
  }

  /**
   * Whether `name` is a class here; `""`, the default class, always is.
   *
   * @param name The class.
   * @returns Whether it is known here.
   */
  hasClass(name: string): boolean {
    return name === "" || this.#classes.has(name);
  }

  /**
   * Adds or changes a class.
   *
   * @param name The class, a non-empty string.
   * @param limit Its limit.
   * @throws {TypeError} when `name` is not a string or `limit` not a {@link Limit}.
   * @throws {RangeError} when `name` is `""` or longer than `maxKeyBytes` bytes of UTF-8.
   * @throws {RateguardError} `TooManyClasses` when a new class would pass `maxClasses`.
   */
  setClass(name: string, limit: Limit): void {
    checkNamed(name, "setClass", this.#maxKeyBytes);
    checkLimit(limit, `setClass(${JSON.stringify(name)})`);
    if (!this.#classes.has(name) && this.#classes.size >= this.#options.maxClasses) {
      throw tooManyClasses(this.#options.maxClasses);
    }
    this.#classes.set(name, limit);
    this.#changed();
  }

  /**
   * Removes a class, its shadow and its key limits; its keys fall back to
   * the default limit. (Its key limits went with it so that none is left
   * listed and in force under a class that is gone, where a listing
   * written back would be refused.)
   *
   * @param name The class.
   * @returns Whether there was such a class.
   */
  removeClass(name: string): boolean {
    const had = this.#classes.delete(name);
    if (had) {
      this.#shadows.delete(name);
      this.#dropKeyLimits(name);
      this.#changed();
    }
    return had;
  }

  #dropKeyLimits(className: string): void {
    const perClass = this.#keyLimits.get(className);
    if (!perClass) return;
    this.#keyLimitCount -= perClass.size;
    this.#keyLimits.delete(className);
  }

  /**
   * Replaces every named class at once, or none if one entry is refused. A
   * class left out goes with its shadow and key limits, as {@link LimitBook.removeClass}.
   *
   * @param entries The classes, as `[name, limit]`.
   * @throws {TypeError} as {@link LimitBook.setClass}.
   * @throws {RangeError} as {@link LimitBook.setClass}.
   * @throws {RateguardError} `TooManyClasses` when there are more than `maxClasses`.
   */
  setClasses(entries: Iterable<ClassEntry>): void {
    const next = new Map<string, Limit>();
    for (const [name, limit] of entries) {
      checkNamed(name, "setClasses", this.#maxKeyBytes);
      next.set(name, checkLimit(limit, `setClasses(${JSON.stringify(name)})`));
    }
    if (next.size > this.#options.maxClasses) throw tooManyClasses(this.#options.maxClasses);
    for (const name of this.#classes.keys()) if (!next.has(name)) this.#dropKeyLimits(name);
    this.#classes = next;
    for (const name of [...this.#shadows.keys()]) {
      if (!this.hasClass(name)) this.#shadows.delete(name);
    }
    this.#changed();
  }

  /**
   * Gives one key of a class a limit of its own, or the limit of another class.
   *
   * @param className The key's class.
   * @param key The key, a non-empty string.
   * @param limit Its limit, or `KeyLimit.class(name)`.
   * @throws {TypeError} when an argument has the wrong type.
   * @throws {RateguardError} `TooManyKeyLimits` when a new entry would pass `maxKeyLimits`.
   */
  setKeyLimit(className: string, key: string, limit: KeyLimitSpec): void {
    this.checkKey(className, key, "setKeyLimit");
    checkSpec(limit, "setKeyLimit");
    let perClass = this.#keyLimits.get(className);
    const isNew = !perClass?.has(key);
    if (isNew && this.#keyLimitCount >= this.#options.maxKeyLimits) {
      throw tooManyKeyLimits(this.#options.maxKeyLimits);
    }
    if (!perClass) this.#keyLimits.set(className, perClass = new Map());
    perClass.set(key, limit);
    if (isNew) this.#keyLimitCount++;
    this.#changed();
  }

  /**
   * Removes one key's own limit; it falls back to its class's.
   *
   * @param className The key's class.
   * @param key The key.
   * @returns Whether it had a limit of its own.
   */
  removeKeyLimit(className: string, key: string): boolean {
    const perClass = this.#keyLimits.get(className);
    if (!perClass?.delete(key)) return false;
    if (perClass.size === 0) this.#keyLimits.delete(className);
    this.#keyLimitCount--;
    this.#changed();
    return true;
  }

  /**
   * Replaces every key limit at once, or none if one entry is refused.
   *
   * @param entries The key limits, as `[className, key, limit]`.
   * @throws {TypeError} as {@link LimitBook.setKeyLimit}.
   * @throws {RateguardError} `TooManyKeyLimits` when there are more than `maxKeyLimits`.
   */
  setKeyLimits(entries: Iterable<KeyLimitEntry>): void {
    const next = new Map<string, Map<string, KeyLimitSpec>>();
    let count = 0;
    let item = 0;
    for (const [className, key, limit] of entries) {
      this.checkKey(className, key, "setKeyLimits", item++);
      checkSpec(limit, "setKeyLimits");
      let perClass = next.get(className);
      if (!perClass) next.set(className, perClass = new Map());
      if (!perClass.has(key)) count++;
      perClass.set(key, limit);
    }
    if (count > this.#options.maxKeyLimits) {
      throw tooManyKeyLimits(this.#options.maxKeyLimits, count);
    }
    this.#keyLimits = next;
    this.#keyLimitCount = count;
    this.#changed();
  }

  /**
   * Every key limit, as `[className, key, limit]`.
   *
   * @returns A fresh array.
   */
  keyLimits(): KeyLimitEntry[] {
    const out: KeyLimitEntry[] = [];
    for (const [className, perClass] of this.#keyLimits) {
      for (const [key, limit] of perClass) out.push([className, key, limit]);
    }
    return out;
  }

  /**
   * Sets (or with `null`, removes) the shadow of a class; `""` is the default class.
   *
   * @param className The class.
   * @param limit The shadow, or `null`.
   * @throws {TypeError} when `limit` is neither a {@link Limit} nor `null`.
   * @throws {RangeError} when `className` is longer than `maxKeyBytes` bytes of UTF-8.
   * @throws {RateguardError} `UnknownClass` when there is no such class.
   */
  setShadow(className: string, limit: Limit | null): void {
    checkNameBytes(checkClassName(className, "setShadow"), "setShadow", this.#maxKeyBytes);
    if (!this.hasClass(className)) throw unknownClass(className);
    if (limit === null) {
      if (!this.#shadows.delete(className)) return;
    } else {
      this.#shadows.set(className, checkLimit(limit, `setShadow(${JSON.stringify(className)})`));
    }
    this.#changed();
  }

  /**
   * Every shadow, as `[className, limit]`.
   *
   * @returns A fresh array.
   */
  shadows(): ShadowEntry[] {
    return [...this.#shadows];
  }

  /**
   * Replaces every shadow at once, or none if one names an unknown class.
   *
   * @param entries The shadows, as `[className, limit]`.
   * @throws {TypeError} as {@link LimitBook.setShadow}.
   * @throws {RateguardError} `UnknownClass` when an entry names no class here.
   */
  setShadows(entries: Iterable<ShadowEntry>): void {
    const next = new Map<string, Limit>();
    for (const [className, limit] of entries) {
      checkNameBytes(checkClassName(className, "setShadows"), "setShadows", this.#maxKeyBytes);
      if (!this.hasClass(className)) throw unknownClass(className);
      next.set(className, checkLimit(limit, `setShadows(${JSON.stringify(className)})`));
    }
    this.#shadows = next;
    this.#changed();
  }

  /**
   * The rule a key of a class runs under now.
   *
   * @param className The key's class.
   * @param key The key.
   * @returns Its rule: its own limit's, its class's, or the default's.
   *
   * @internal For the enforcer, the allocator and the guard (a `Rule` is the core's own).
   */
  resolve(className: string, key: string): Rule {
    const own = this.#keyLimitCount === 0 ? undefined : this.#keyLimits.get(className)?.get(key);
    if (own instanceof Limit) {
      return ruleOf(own, undefined, false, this.#scale, this.sharesBurst(own));
    }
    return this.classRule(own === undefined ? className : own.className);
  }

  /**
   * The rule of a class (with its shadow), or the default's if it is unknown.
   *
   * @param className The class.
   * @returns The rule.
   *
   * @internal For the allocator.
   */
  classRule(className: string): Rule {
    let rule = this.#rules.get(className);
    if (rule) return rule;
    const limit = className === "" ? this.#default : this.#classes.get(className);
    if (limit === undefined) return this.#unknown ??= this.#build("", true);
    rule = this.#build(className, false);
    this.#rules.set(className, rule);
    return rule;
  }

  /**
   * The slowest rate among the classes: the strict side, for keys without a place.
   *
   * @returns The limit with the slowest rate.
   */
  strictestLimit(): Limit {
    let strictest = this.#default;
    for (const limit of this.#classes.values()) {
      if (limit.ratePerSec() < strictest.ratePerSec()) strictest = limit;
    }
    return strictest;
  }

  #build(className: string, unknown: boolean): Rule {
    const limit = className === "" ? this.#default : this.#classes.get(className)!;
    const shadow = this.#shadows.get(className);
    const scale = this.#scale;
    const shadowRule = shadow && ruleOf(shadow, undefined, false, scale, this.sharesBurst(shadow));
    return ruleOf(limit, shadowRule, unknown, scale, this.sharesBurst(limit));
  }

  #changed(): void {
    this.#rules.clear();
    this.#unknown = undefined;
    this.epoch++;
  }
}
