/**
 * A fleet sharing rules, on virtual time: fleet nodes with `fleetRules` on
 * over the simulator's driver, each with its own book and wall clock, their
 * gossip signed as configured; changes made on any node as its admin API
 * makes them. For the tests of fleet rules and the figures of
 * docs/fleet-rules.md.
 *
 * @module
 */

import type { AuthConfig, Verdict } from "../../core/auth.ts";
import type { Enforcer } from "../../core/enforcer.ts";
import type { FleetNode, FleetStats, RuleChange } from "../../core/fleet_node.ts";
import { Limit } from "../../core/limit.ts";
import type { LimitBook } from "../../core/rules.ts";
import { applyRule, decodeRules } from "../../core/rules_sync/mod.ts";
import { type Address, decode } from "../../proto/mod.ts";
import type { Decision } from "../../core/decision.ts";
import type { SimOptions } from "../driver/face.ts";
import { guardNode, type Rejected, Signing } from "./parts.ts";
import { Simulation } from "./simulation.ts";

/** How a rules fleet is set up. */
export interface RulesFleetOptions extends SimOptions {
  /** Nodes started at time 0 (node 0 joins through node 1, the others through node 0). */
  readonly size: number;
  /** How every node signs its gossip. @default {off} */
  readonly auth?: AuthConfig;
  /** Key limits each node keeps at most. @default {GUARD_BOUNDS.maxKeyLimits.default} */
  readonly maxKeyLimits?: number;
  /** Node `index`'s wall clock ahead of virtual time, ms. @default {none} */
  readonly wallSkewMs?: (index: number) => number;
  /** Whether node `index` shares rules: off, for a baseline of today's traffic or a rollout. @default {all do} */
  readonly fleetRules?: boolean | ((index: number) => boolean);
  /** Whether to decode every datagram sent and count those carrying a page (`pages()`). @default {false} */
  readonly countPages?: boolean;
}

/** The fleet's limit before any change. */
export const START_LIMIT: Limit = Limit.perSecond(1_000);

/** See the module doc. */
export class RulesFleet extends Simulation<FleetNode> {
  readonly #options: RulesFleetOptions;
  readonly #signing: Signing;
  readonly #books: LimitBook[] = [];
  readonly #enforcers: Enforcer[] = [];
  #pages = { datagrams: 0, bytes: 0 };

  /** @param options The seed, size, signing, bounds and faults. */
  constructor(options: RulesFleetOptions) {
    super(options);
    this.#options = options;
    this.#signing = new Signing(options.auth);
    this.driver.populate(options.size);
  }

  /** Node `index`'s book. */
  book(index: number): LimitBook {
    return this.#books[index];
  }

  /** Whether node `index` runs dry. */
  dryRun(index: number): boolean {
    return this.#enforcers[index].dryRun;
  }

  /** Datagrams node `index` refused for their signature, by reason. */
  rejected(index: number): Rejected {
    return this.#signing.rejected(index);
  }

  /** Node `index`'s figures, if it runs. */
  stats(index: number): FleetStats | undefined {
    return this.node(index)?.stats(this.driver.localMs(index));
  }

  /**
   * Makes a change on node `index` as its admin API does: to its book, then
   * to the fleet.
   */
  change(index: number, change: RuleChange): void {
    const node = this.running(index);
    node.admitRule(change); // as the guard does: refused before it is made here
    const book = this.#books[index];
    applyRule({
      book,
      setDryRun: (on) => this.#enforcers[index].dryRun = on,
      startLimit: START_LIMIT,
      startDryRun: false,
      block: () => {
        throw new RangeError("a block goes through RulesFleet.block, as guard.block");
      },
      lookup: () => undefined,
    }, change as Parameters<typeof applyRule>[1]);
    node.shareRule(this.driver.localMs(index), change);
    this.driver.flush(index);
  }

  /** A check of `key` (default class, cost 1) on node `index`, now. */
  check(index: number, key: string): Decision {
    return this.running(index).check("", key, 1, this.driver.localMs(index));
  }

  /** Blocks `key` (default class) for `ms` on node `index`, as its `guard.block` does. */
  block(index: number, key: string, ms: number): boolean {
    const blocked = this.running(index).block("", key, ms, this.driver.localMs(index));
    this.driver.flush(index);
    return blocked;
  }

  /** Resets `key` (default class) on node `index`, as its `guard.reset` does. */
  reset(index: number, key: string): boolean {
    const had = this.running(index).reset("", key, this.driver.localMs(index));
    this.driver.flush(index);
    return had;
  }

  /** Sets a key limit on node `index`. */
  setKeyLimit(index: number, className: string, key: string, limit: Limit | undefined): void {
    this.change(index, { kind: "keyLimit", className, key, value: limit });
  }

  /** Whether every running node holds the same rules and none is learning. */
  converged(): boolean {
    let digest: string | undefined;
    for (let i = 0; i < this.size; i++) {
      const s = this.stats(i);
      if (!s?.rules.shared) continue;
      if (s.rules.learning || (digest !== undefined && s.rules.digest !== digest)) return false;
      digest = s.rules.digest;
    }
    return true;
  }

  /**
   * Runs until {@link converged}, checking every `stepMs`, for at most `maxMs`.
   *
   * @returns Virtual ms it took, or undefined when it did not converge.
   */
  runUntilConverged(maxMs: number, stepMs = 50): number | undefined {
    const startMs = this.nowMs;
    for (let t = startMs; t <= startMs + maxMs; t += stepMs) {
      this.runUntil(t);
      if (this.converged()) return t - startMs;
    }
    return undefined;
  }

  /**
   * Datagrams carrying a page of a table, and their bytes, sent by every
   * node since the last `resetPages()` (with `countPages` only): what
   * transfers cost.
   */
  pages(): { datagrams: number; bytes: number } {
    return { ...this.#pages };
  }

  /** Zeroes the counts of `pages()`. */
  resetPages(): void {
    this.#pages = { datagrams: 0, bytes: 0 };
  }

  #countPage(bytes: Uint8Array): void {
    const message = decode(bytes);
    if (!message.ok || !("rules" in message.value) || !message.value.rules) return;
    if (!decodeRules(message.value.rules)?.page) return;
    this.#pages.datagrams++;
    this.#pages.bytes += bytes.length;
  }

  /**
   * Counted as a page when it carries one (`countPages`), then signed.
   *
   * @internal For the face, not its callers.
   */
  protected override seal(index: number, bytes: Uint8Array): Uint8Array {
    if (this.#options.countPages) this.#countPage(bytes);
    return this.#signing.seal(index, bytes);
  }

  /**
   * Node `index`'s signature check, counted when it refuses.
   *
   * @internal For the face, not its callers.
   */
  protected override open(index: number, bytes: Uint8Array): Verdict {
    return this.#signing.open(index, bytes);
  }

  /**
   * A fleet node at `START_LIMIT` with the fleet's bounds, sharing rules as set.
   *
   * @internal For the face, not its callers.
   */
  protected override startNode(
    index: number,
    address: Address,
    seeds: string[],
    seed: number,
  ): FleetNode {
    const options = this.#options;
    const { node, book, enforcer } = guardNode({
      limit: START_LIMIT,
      maxKeyLimits: options.maxKeyLimits,
      address,
      seeds,
      fleetRules: typeof options.fleetRules === "function"
        ? options.fleetRules(index)
        : options.fleetRules ?? true,
      wallOffsetMs: options.wallSkewMs?.(index) ?? 0,
      membership: { seed },
    });
    this.#books[index] = book;
    this.#enforcers[index] = enforcer;
    return node;
  }
}
