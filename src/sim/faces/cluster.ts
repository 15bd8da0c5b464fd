/**
 * A cluster of membership nodes on virtual time over an in-memory network,
 * every random choice drawn from one seed: the same seed, the same run. A
 * face over the simulator's driver ({@link Simulation}, which owns time,
 * the network, the faults and the nodes' lives); the cluster starts
 * membership nodes and reports what they observe.
 *
 * @module
 */

import {
  type Address,
  type MemberChange,
  type MembershipOptions,
  type MemberState,
  Node,
} from "../../core/membership/mod.ts";
import type { SimOptions } from "../driver/face.ts";
import { addressOf } from "../driver/names.ts";
import { Simulation } from "./simulation.ts";

/** How a cluster starts. */
export interface ClusterOptions extends SimOptions {
  /**
   * Nodes started at time 0, each joining through node 0 (node 0 through node 1).
   *
   * @default {0}
   */
  readonly size?: number;
  /**
   * Options of every node; `seed`, `seeds` and `extension` are the simulator's.
   *
   * @default {the defaults of MembershipOptions}
   */
  readonly membership?: Omit<MembershipOptions, "seed" | "seeds" | "extension">;
}

/** A change seen by one node, as the simulator reports it. */
export interface Observed {
  /** Virtual time. */
  readonly atMs: number;
  /** Index of the node that changed its mind. */
  readonly observer: number;
  /** The change. */
  readonly change: MemberChange;
}

/**
 * A deterministic cluster.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Cluster } from "@rateguard/guard/sim";
 * const cluster = new Cluster({ seed: 1, size: 3 });
 * cluster.runUntil(3_000);
 * assert(cluster.converged());
 * ```
 */
export class Cluster extends Simulation<Node> {
  readonly #membership: ClusterOptions["membership"];
  readonly #listeners: ((observed: Observed) => void)[] = [];

  /**
   * A cluster of `size` nodes, all started at time 0: node 0 joins through
   * node 1, the others through node 0.
   *
   * @throws {RangeError} if `size` or `clockDrift` is out of range.
   *
   * @param options The seed, the size, the faults and the membership tunables.
   */
  constructor(options: ClusterOptions) {
    super(options);
    this.#membership = options.membership;
    this.driver.populate(options.size ?? 0);
  }

  /**
   * A membership node whose changes of mind go to the listeners.
   *
   * @internal For the face, not its callers.
   */
  protected override startNode(
    observer: number,
    address: Address,
    seeds: string[],
    seed: number,
  ): Node {
    return new Node(address, {
      ...this.#membership,
      seed,
      seeds,
      extension: {
        memberChanged: (change) => {
          const atMs = this.nowMs;
          for (const listener of this.#listeners) listener({ atMs, observer, change });
        },
      },
    });
  }

  /**
   * Calls `listener` on every change of mind of every node.
   *
   * @param listener Called with the node, the time and the change.
   */
  onChange(listener: (observed: Observed) => void): void {
    this.#listeners.push(listener);
  }

  /**
   * What node `index` believes of every member, itself included ("alive").
   *
   * @param index The node's index.
   * @returns Each member's address, as text, with its state.
   */
  view(index: number): Map<string, MemberState> {
    const node = this.node(index);
    const view = new Map<string, MemberState>();
    if (!node) return view;
    view.set(node.address.toString(), "alive");
    for (const member of node.members()) view.set(member.address.toString(), member.state);
    return view;
  }

  /**
   * Whether every running node sees exactly the running nodes alive.
   *
   * @returns Whether the views agree with what runs.
   */
  converged(): boolean {
    const running: string[] = [];
    for (let i = 0; i < this.size; i++) {
      if (this.isRunning(i)) running.push(addressOf(i).toString());
    }
    for (let i = 0; i < this.size; i++) {
      if (!this.isRunning(i)) continue;
      const view = this.view(i);
      const alive = [...view].filter(([, state]) => state === "alive").map(([key]) => key);
      if (alive.length !== running.length || running.some((key) => view.get(key) !== "alive")) {
        return false;
      }
    }
    return true;
  }
}
