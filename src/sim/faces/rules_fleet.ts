/**
 * A fleet sharing rules, on virtual time: fleet nodes with `fleetRules` on
 * over the simulator's driver, each with its own book and wall clock, their
 * gossip signed as configured; changes made on any node as its admin API
 * makes them. For the tests of fleet rules and the figures of
 * docs/fleet-rules.md.
 *
 * @module
 */

import { type AuthConfig, authConfig, judge, seal, type Verdict } from "../../core/auth.ts";
import { Enforcer } from "../../core/enforcer.ts";
import { FleetNode, type FleetStats, type RuleChange } from "../../core/fleet_node.ts";
import { PUBLIC_HASH_KEY } from "../../core/hash.ts";
import { Limit } from "../../core/limit.ts";
import { COLD_FRACTION, DEFAULT_PARTITION_POLICY, GUARD_BOUNDS } from "../../core/options.ts";
import { LimitBook } from "../../core/rules.ts";
import { applyRule, decodeRules } from "../../core/rules_sync/mod.ts";
import { type Address, decode } from "../../proto/mod.ts";
import { Driver } from "../driver/driver.ts";
import type { Decision } from "../../core/decision.ts";
import type { SimOptions } from "../driver/face.ts";
import { syncMac } from "./hmac.ts";

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
export class RulesFleet {
  readonly driver: Driver<FleetNode>;
  readonly #options: RulesFleetOptions;
  readonly #books: LimitBook[] = [];
  readonly #enforcers: Enforcer[] = [];
  readonly #refused: { badTag: number; unsigned: number }[] = [];
  #pages = { datagrams: 0, bytes: 0 };

  /** @param options The seed, size, signing, bounds and faults. */
  constructor(options: RulesFleetOptions) {
    this.#options = options;
    const auth = options.auth ?? authConfig("off");
    this.driver = new Driver<FleetNode>(options, {
      start: (index, address, seeds, seed) => this.#start(index, address, seeds, seed),
      send: (_index, bytes) => {
        if (options.countPages) this.#countPage(bytes);
        return seal(auth, bytes, syncMac) as Uint8Array;
      },
      receive: (index, _from, bytes) => {
        const verdict = judge(auth, bytes, syncMac) as Verdict;
        if (verdict.accept) return verdict.bytes as Uint8Array;
        this.#refused[index] ??= { badTag: 0, unsigned: 0 };
        this.#refused[index][verdict.reason]++;
        return undefined;
      },
    });
    this.driver.populate(options.size);
  }

  /** Nodes ever added. */
  get size(): number {
    return this.driver.size;
  }

  /** Node `index`'s book. */
  book(index: number): LimitBook {
    return this.#books[index];
  }

  /** Whether node `index` runs dry. */
  dryRun(index: number): boolean {
    return this.#enforcers[index].dryRun;
  }

  /** Datagrams node `index` refused for their signature. */
  refused(index: number): { badTag: number; unsigned: number } {
    return this.#refused[index] ?? { badTag: 0, unsigned: 0 };
  }

  /** Node `index`'s figures, if it runs. */
  stats(index: number): FleetStats | undefined {
    return this.driver.node(index)?.stats(this.driver.localMs(index));
  }

  /**
   * Makes a change on node `index` as its admin API does: to its book, then
   * to the fleet.
   */
  change(index: number, change: RuleChange): void {
    const node = this.driver.node(index);
    if (!node) throw new RangeError(`node ${index} is not running`);
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
    return this.#running(index).check("", key, 1, this.driver.localMs(index));
  }

  /** Blocks `key` (default class) for `ms` on node `index`, as its `guard.block` does. */
  block(index: number, key: string, ms: number): boolean {
    const blocked = this.#running(index).block("", key, ms, this.driver.localMs(index));
    this.driver.flush(index);
    return blocked;
  }

  /** Resets `key` (default class) on node `index`, as its `guard.reset` does. */
  reset(index: number, key: string): boolean {
    const had = this.#running(index).reset("", key, this.driver.localMs(index));
    this.driver.flush(index);
    return had;
  }

  #running(index: number): FleetNode {
    const node = this.driver.node(index);
    if (!node) throw new RangeError(`node ${index} is not running`);
    return node;
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
    const startMs = this.driver.nowMs;
    for (let t = startMs; t <= startMs + maxMs; t += stepMs) {
      this.driver.runUntil(t);
      if (this.converged()) return t - startMs;
    }
    return undefined;
  }

  /** Bytes and datagrams all nodes sent since the last `driver.resetTraffic()`. */
  traffic(): { datagrams: number; bytes: number } {
    let datagrams = 0, bytes = 0;
    for (let i = 0; i < this.size; i++) {
      const t = this.driver.traffic(i);
      datagrams += t.datagrams;
      bytes += t.bytes;
    }
    return { datagrams, bytes };
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

  #start(index: number, address: Address, seeds: string[], seed: number): FleetNode {
    const maxKeyLimits = this.#options.maxKeyLimits ?? GUARD_BOUNDS.maxKeyLimits.default;
    const book = new LimitBook(START_LIMIT, {
      maxClasses: GUARD_BOUNDS.maxClasses.default,
      maxKeyLimits,
    });
    const enforcer = new Enforcer(book, {
      capacity: 2 * GUARD_BOUNDS.trackedKeys.default,
      overflowScale: COLD_FRACTION,
      fleet: { hashKey: PUBLIC_HASH_KEY },
    });
    this.#books[index] = book;
    this.#enforcers[index] = enforcer;
    return new FleetNode({
      address,
      seeds,
      book,
      enforcer,
      policy: DEFAULT_PARTITION_POLICY,
      fleetRules: typeof this.#options.fleetRules === "function"
        ? this.#options.fleetRules(index)
        : this.#options.fleetRules ?? true,
      wallOffsetMs: this.#options.wallSkewMs?.(index) ?? 0,
      membership: { seed },
    });
  }
}
