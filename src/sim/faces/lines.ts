/**
 * A fleet node's `acquire` callers on virtual time: the core's wait lines,
 * one per key, each with one timer on the simulator's event heap, as the
 * guard keeps them on the runtime's. What the simulator shows of waiting
 * callers (what they count as demand, the share they claim) is then what
 * a guard does.
 *
 * @module
 */

import type { Decision } from "../../core/decision.ts";
import type { Enforcer } from "../../core/enforcer.ts";
import type { FleetNode } from "../../core/fleet_node.ts";
import type { LineGate } from "../../core/wait_line.ts";
import { WaitLine } from "../../core/wait_line.ts";
import type { Driver } from "../driver/driver.ts";

/** How a simulated caller waits (`Fleet.acquire`), as `guard.acquire` does. */
export interface FleetWaitOptions {
  /** The longest wait, ms on the node's clock. */
  readonly maxWaitMs: number;
  /**
   * What the request costs.
   *
   * @default {1}
   */
  readonly cost?: number;
  /** Told what ended the wait, when it did not end at once. */
  readonly settle: (decision: Decision) => void;
}

/** What the lines of one node's life need of the simulator. */
export interface LinesHooks {
  /** Runs `run` at virtual time `atMs`. */
  at(atMs: number, run: () => void): void;
  /** Virtual time, ms. */
  nowMs(): number;
  /** The node's clock, ms. */
  localMs(): number;
  /** The node's enforcer, as a line of one key sees it. */
  gate(key: string): LineGate;
  /** Whether this life of the node still runs and is not paused. */
  awake(): "awake" | "paused" | "gone";
  /** Sends what the node has to send, after its enforcer was used. */
  flush(): void;
}

/** A key's wait line with its one timer on the event heap. */
interface TimedLine {
  readonly line: WaitLine;
  /** The one timer's instant, on the node's clock; a stale event carries another. */
  atLocalMs: number | undefined;
}

/** While a node is paused, its lines look again this often, ms. */
const PAUSED_RETRY_MS = 1;

/** The wait lines of one life of a node. */
export class Lines {
  readonly #hooks: LinesHooks;
  readonly #lines = new Map<string, TimedLine>();

  /**
   * No one waiting yet.
   *
   * @param hooks The simulator's time, the node's clock and its enforcer.
   */
  constructor(hooks: LinesHooks) {
    this.#hooks = hooks;
  }

  /**
   * A caller waits in `key`'s line (of the default class).
   *
   * @param key The key.
   * @param options The longest wait, the cost, and who is told the end.
   * @returns The decision when answered at once; undefined when it waits.
   */
  acquire(key: string, options: FleetWaitOptions): Decision | undefined {
    let timed = this.#lines.get(key);
    if (timed === undefined) {
      timed = { line: new WaitLine(this.#hooks.gate(key)), atLocalMs: undefined };
      this.#lines.set(key, timed);
    }
    const nowMs = this.#hooks.localMs();
    const waiter = {
      cost: options.cost ?? 1,
      deadlineMs: nowMs + options.maxWaitMs,
      settle: options.settle,
    };
    const answer = timed.line.join(waiter, nowMs);
    this.#hooks.flush();
    this.#arm(key, timed);
    return answer;
  }

  #arm(key: string, timed: TimedLine): void {
    const atLocalMs = timed.line.pollTimeout();
    if (atLocalMs === timed.atLocalMs) return;
    timed.atLocalMs = atLocalMs;
    if (atLocalMs === undefined) {
      this.#lines.delete(key);
      return;
    }
    // Virtual time runs no faster than the node's clock (drift only speeds
    // it up), so waiting the clock's difference in virtual time is never early.
    const fire = () => {
      if (timed.atLocalMs !== atLocalMs || this.#lines.get(key) !== timed) return; // stale
      const awake = this.#hooks.awake();
      if (awake === "gone") return;
      if (awake === "paused") return this.#hooks.at(this.#hooks.nowMs() + PAUSED_RETRY_MS, fire);
      timed.atLocalMs = undefined;
      timed.line.handleTimeout(this.#hooks.localMs());
      this.#hooks.flush();
      this.#arm(key, timed);
    };
    this.#hooks.at(this.#hooks.nowMs() + Math.max(0, atLocalMs - this.#hooks.localMs()), fire);
  }
}

/**
 * The wait lines of `node`, the life of node `index` that `driver` runs:
 * on the driver's event heap and the node's clock, at the gates of
 * `enforcer`'s default class.
 *
 * @param driver The driver that runs the node.
 * @param index The node's index.
 * @param node This life of the node: its lines end with it.
 * @param enforcer The node's enforcer.
 * @returns No one waiting yet.
 */
export function linesOn(
  driver: Driver<FleetNode>,
  index: number,
  node: FleetNode,
  enforcer: Enforcer,
): Lines {
  return new Lines({
    at: (atMs, run) => driver.at(atMs, run),
    nowMs: () => driver.nowMs,
    localMs: () => driver.localMs(index),
    gate: (key) => enforcer.lineGate("", key),
    awake: () => driver.node(index) !== node ? "gone" : driver.isPaused(index) ? "paused" : "awake",
    flush: () => driver.flush(index),
  });
}
