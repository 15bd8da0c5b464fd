/**
 * The log of a guard's fleet rules: a refusal, once for each reason, and a
 * member falling out of step with its fleet, once when it starts and once
 * when it ends. The core only counts and keeps the last reason
 * (`stats().rules`); reading those now and then, this says what changed.
 *
 * @module
 */

import type { FleetRulesStats } from "./stats.ts";

/** Where the lines go: the sidecar's log, say. */
export interface RulesLog {
  /** Something worth knowing happened. */
  info(message: string, fields?: Readonly<Record<string, string | number>>): void;
  /** Something went wrong and the guard carries on. */
  warn(message: string, fields?: Readonly<Record<string, string | number>>): void;
}

/** Reasons remembered as logged; past it, all are forgotten (a reason may then be logged again). */
const REASONS_MAX = 256;

/**
 * See the module doc.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Guard } from "@rateguard/guard";
 * import { RulesWatch } from "./rules_watch.ts";
 *
 * const lines: string[] = [];
 * const watch = new RulesWatch({ info: (m) => lines.push(m), warn: (m) => lines.push(m) });
 * const guard = await Guard.builder().limit(10).spawn();
 * watch.observe(guard.stats().rules);
 * assert.deepEqual(lines, []);
 * await guard.leave();
 * ```
 */
export class RulesWatch {
  readonly #log: RulesLog;
  readonly #logged = new Set<string>();
  #refusals = 0;
  #outOfStep = false;
  #tableFull = false;

  /** @param log Where to write. */
  constructor(log: RulesLog) {
    this.#log = log;
  }

  /**
   * Logs what changed since the last reading.
   *
   * @param rules `stats().rules` now.
   */
  observe(rules: FleetRulesStats): void {
    if (rules.refusals > this.#refusals && rules.lastRefusal !== "") {
      // A refused change is offered again by gossip and transfers: its reason is told once.
      if (!this.#logged.has(rules.lastRefusal)) {
        if (this.#logged.size >= REASONS_MAX) this.#logged.clear();
        this.#logged.add(rules.lastRefusal);
        this.#log.warn("fleet rule refused", {
          reason: rules.lastRefusal,
          refusals: rules.refusals,
          malformed: rules.malformed,
        });
      }
    }
    this.#refusals = rules.refusals;
    if (rules.outOfStep && !this.#outOfStep) {
      this.#log.warn("fleet rules out of step", {
        reason: rules.outOfStepReason,
        digest: rules.digest,
      });
    } else if (!rules.outOfStep && this.#outOfStep) {
      this.#log.info("fleet rules in step again", { digest: rules.digest });
    }
    this.#outOfStep = rules.outOfStep;
    if (rules.tableFull && !this.#tableFull) {
      this.#log.warn("fleet rules table full", { reason: rules.tableFullReason });
    } else if (!rules.tableFull && this.#tableFull) {
      this.#log.info("fleet rules table has room again", {
        entries: rules.entries,
        bound: rules.bound,
      });
    }
    this.#tableFull = rules.tableFull;
  }
}
