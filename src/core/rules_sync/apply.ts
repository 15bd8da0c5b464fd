/**
 * Making a rule the fleet agreed on so here: the book's, the dry run's and
 * the blocked key's side of a merged entry, with the precedence of `mod.ts` (a fleet entry,
 * a removal included, replaces what this instance was started with; a
 * removed default limit or dry run goes back to the start-up value, since
 * neither can be absent).
 *
 * @module
 */

import { KeyLimit } from "../key_limit.ts";
import { Limit } from "../limit.ts";
import type { LimitBook } from "../rules.ts";
import type { Enforcer } from "../enforcer.ts";
import type { HashKey } from "../hash.ts";
import { BlockedUntil, type Origin, type RuleEntry, type RuleKind } from "./entry.ts";
import { RulesSync } from "./sync.ts";

/** What a merged entry changes. */
export interface ApplyTarget {
  /** The limits. */
  readonly book: LimitBook;
  /** Turns dry run on or off. */
  readonly setDryRun: (on: boolean) => void;
  /** The default limit this instance was started with. */
  readonly startLimit: Limit;
  /** Whether it was started dry. */
  readonly startDryRun: boolean;
  /**
   * Blocks a key until an instant of the wall clock, exactly (a shorter
   * block than the one in force included), or lifts its block (`undefined`).
   */
  readonly block: (className: string, key: string, untilWallMs: number | undefined) => void;
  /** The fleet's entry for a rule, to apply a shadow whose class arrived after it. */
  readonly lookup: (kind: RuleKind, className: string, key: string) => RuleEntry | undefined;
  /**
   * The fleet's live key limits of a class: those newer than its removal,
   * which the book's removal of the class took too, are set again.
   */
  readonly keyLimitsOf?: (className: string) => Iterable<RuleEntry>;
  /** Told why the book refused an entry (`maxClasses`, `maxKeyLimits`), before `applyRule` returns false. */
  readonly refused?: (reason: string) => void;
}

/**
 * Applies `entry` to `target`. Never throws: what the book refuses (a
 * class beyond `maxClasses`, a shadow of a class not here yet) is
 * counted, and a shadow is applied again when its class arrives.
 *
 * @param target The book and dry run.
 * @param entry The entry, newer than what was held.
 * @returns Whether the book took it.
 */
export function applyRule(target: ApplyTarget, entry: RuleEntry): boolean {
  const { book } = target;
  const value = entry.value;
  try {
    switch (entry.kind) {
      case "class":
        if (value instanceof Limit) {
          book.setClass(entry.className, value);
          const shadow = target.lookup("shadow", entry.className, "");
          if (shadow?.value instanceof Limit) book.setShadow(entry.className, shadow.value);
        } else {
          book.removeClass(entry.className);
          for (const kept of target.keyLimitsOf?.(entry.className) ?? []) {
            book.setKeyLimit(kept.className, kept.key, kept.value as Limit | KeyLimit);
          }
        }
        return true;
      case "keyLimit":
        if (value instanceof Limit || value instanceof KeyLimit) {
          book.setKeyLimit(entry.className, entry.key, value);
        } else book.removeKeyLimit(entry.className, entry.key);
        return true;
      case "shadow":
        if (!book.hasClass(entry.className)) return value === undefined;
        book.setShadow(entry.className, value instanceof Limit ? value : null);
        return true;
      case "defaultLimit":
        book.setLimit(value instanceof Limit ? value : target.startLimit);
        return true;
      case "dryRun":
        target.setDryRun(typeof value === "boolean" ? value : target.startDryRun);
        return true;
      case "block":
        target.block(
          entry.className,
          entry.key,
          value instanceof BlockedUntil ? value.untilMs : undefined,
        );
        return true;
    }
  } catch (e) {
    // The book's bounds: counted by the caller, and told why.
    target.refused?.(`${entry.kind} ${JSON.stringify(entry.className)}: ${(e as Error).message}`);
    return false;
  }
}

/**
 * Rule sharing over `book` and `enforcer`: peers' changes applied to them
 * by {@link applyRule}, blocks on the enforcer's key slots.
 *
 * @param parts Who this member is, its book and enforcer, its clock and ticket key.
 * @param refused Counts a peer's change the book refused (its bounds).
 * @returns The member's rule sharing.
 */
export function rulesSyncFor(
  parts: {
    readonly self: Origin;
    readonly book: LimitBook;
    readonly enforcer: Enforcer;
    readonly protocolPeriodMs: number;
    readonly wallOffsetMs: number;
    readonly ticketKey: HashKey;
    /** Whether it starts learning: it has seeds, so a fleet to learn from. */
    readonly learning: boolean;
  },
  refused: () => void,
): RulesSync {
  const { book, enforcer, wallOffsetMs } = parts;
  const startLimit = book.defaultLimit();
  const startDryRun = enforcer.dryRun;
  const sync: RulesSync = new RulesSync({
    self: parts.self,
    // Blocks in force here are at most the enforcer's block set: room for
    // as many of the fleet's, beside every class and key limit.
    maxEntries: 2 * (book.maxKeyLimits + book.maxClasses + enforcer.maxBlocks) + 2,
    // Entries of origins that are no member (departed members', forgers')
    // get room for every live rule an honest fleet holds (each class with
    // its shadow, the key limits, the blocks, the default limit and dry
    // run); the rest is kept for members' changes (`table.ts`).
    reservedEntries: book.maxKeyLimits + enforcer.maxBlocks,
    protocolPeriodMs: parts.protocolPeriodMs,
    wallOffsetMs,
    ticketKey: parts.ticketKey,
    apply: (entry, nowMs) => {
      const target: ApplyTarget = {
        book,
        setDryRun: (on) => enforcer.dryRun = on,
        block: (className, key, untilWallMs) => {
          const untilMs = untilWallMs === undefined ? nowMs : untilWallMs - wallOffsetMs;
          enforcer.blockUntil(className, key, untilMs, nowMs);
        },
        startLimit,
        startDryRun,
        lookup: (kind, className, key) => sync.entry(kind, className, key),
        keyLimitsOf: (className) => sync.rulesOf("keyLimit", className),
        refused: (reason) => sync.refusedHere(`refused by this instance's book: ${reason}`),
      };
      if (!applyRule(target, entry)) refused();
    },
  }, parts.learning);
  return sync;
}
