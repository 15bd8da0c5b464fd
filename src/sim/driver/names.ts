/**
 * The simulator's name service. Nodes are given their seeds by name, as a
 * fleet behind one DNS name is, so that the simulator drives the same path
 * the runtime does: the node asks for a lookup (`pollResolve`), and the
 * answer comes back later, empty, or as a failure, as the test chooses.
 *
 * @module
 */

import { Address } from "../../proto/mod.ts";

/** How the lookups of a node's seed names are answered. */
export interface SeedLookup {
  /** How long each answer takes, ms (default 1: never within the step that asked). */
  readonly delayMs?: number;
  /**
   * What lookups answer until `untilMs`: `"addresses"` (the default, the
   * seed's address), `"nothing"` (an empty answer), or `"fail"` (an error).
   */
  readonly answer?: "addresses" | "nothing" | "fail";
  /** From this virtual time on, lookups answer with the addresses (default: never). */
  readonly untilMs?: number;
}

/**
 * The address of node `index`: 10.0.x.y:7946, counting from 10.0.0.1.
 *
 * @param index The node's index, from 0 to 65,534.
 * @returns Its address.
 */
export function addressOf(index: number): Address {
  const n = index + 1;
  return Address.of(new Uint8Array([10, 0, (n >> 8) & 0xff, n & 0xff]), 7946);
}

/**
 * The seed name under which node `index` is found: `node-<index>.sim:7946`.
 *
 * @param index The node's index.
 * @returns The name its seeds look it up by.
 */
export function seedName(index: number): string {
  return `node-${index}.sim:7946`;
}

/**
 * The answer to a lookup of `host` asked at `nowMs`: when it arrives, and the
 * IPs it gives (undefined for a failure).
 */
export function answer(
  lookup: SeedLookup,
  nowMs: number,
  host: string,
): { atMs: number; ips: string[] | undefined } {
  const atMs = nowMs + Math.max(1, lookup.delayMs ?? 1);
  const kind = atMs >= (lookup.untilMs ?? Infinity) ? "addresses" : lookup.answer ?? "addresses";
  if (kind === "fail") return { atMs, ips: undefined };
  const m = /^node-(\d+)\.sim$/.exec(host);
  if (kind === "nothing" || !m) return { atMs, ips: [] };
  return { atMs, ips: [addressOf(Number(m[1])).host] };
}
