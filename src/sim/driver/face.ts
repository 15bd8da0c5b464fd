/**
 * What the simulator's driver drives and takes: the core's sans-I/O face,
 * the hooks by which its face (`Simulation`, and so `Cluster`, `Fleet` and
 * `RulesFleet`) says how its nodes start and what they do beside the
 * protocol, and the options every simulated run has.
 *
 * @module
 */

import type { Address, ResolveRequest, Transmit } from "../../core/membership/mod.ts";
import type { SeedLookup } from "./names.ts";
import type { NetworkFaults } from "./network.ts";

/** The core's face that the driver drives: a membership `Node`'s and a `FleetNode`'s. */
export interface SimNode {
  /** A datagram arrived from `from`. */
  handleDatagram(nowMs: number, from: Address, bytes: Uint8Array): void;
  /** What `pollTimeout` named is due. */
  handleTimeout(nowMs: number): void;
  /** The next datagram to send. */
  pollTransmit(): Transmit | undefined;
  /** When `handleTimeout` is next due, on the node's clock. */
  pollTimeout(): number | undefined;
  /** The next name to look up. */
  pollResolve(): ResolveRequest | undefined;
  /** A lookup's answer. */
  handleResolved(nowMs: number, name: string, ips: readonly string[]): void;
  /** A lookup's failure. */
  handleResolveFailed(nowMs: number, name: string): void;
  /** Says goodbye; what it sends is drained at once. */
  leave(): void;
}

/** What the layer over the driver decides about its nodes. */
export interface DriverHooks<N extends SimNode> {
  /** A fresh node `index` at `address`, joining through `seeds` (names), its randomness from `seed`. */
  start(index: number, address: Address, seeds: string[], seed: number): N;
  /** The bytes put on the wire for a datagram node `index` sends to `to` (signed, say). */
  send?(index: number, bytes: Uint8Array, to: Address): Uint8Array;
  /** What node `index` is handed of a datagram that reached it; `undefined` drops it. */
  receive?(index: number, from: Address, bytes: Uint8Array): Uint8Array | undefined;
  /** Node `index` is back from a pause and has worked through what it heard meanwhile. */
  resumed?(index: number): void;
}

/** What every simulated run takes: the options of each face extend it. */
export interface SimOptions {
  /** Decides the whole run. */
  readonly seed: number;
  /**
   * Network faults from the start.
   *
   * @default {none}
   */
  readonly faults?: NetworkFaults;
  /**
   * Largest clock drift of a node, as a fraction: 0.01 lets clocks run 1%
   * fast or slow. Each node's drift is drawn from the seed; a fleet's
   * offered traffic keeps to virtual time.
   *
   * @default {0}
   */
  readonly clockDrift?: number;
  /**
   * How the nodes' lookups of their seed names are answered.
   *
   * @default {at once, with the address}
   */
  readonly seedLookup?: SeedLookup;
}
