/**
 * The simulator's name service. Nodes are given their seeds by name, as a
 * fleet behind one DNS name is, so that the simulator drives the same path
 * the runtime does: the node asks for a lookup (`pollResolve`), and the
 * answer comes back later, empty, or as a failure, as the test chooses.
 *
 * @module
 */

import type { Address } from "../proto/mod.ts";

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

/** The seed name under which node `index` is found: `node-<index>.sim:7946`. */
export function seedName(index: number): string {
  return `node-${index}.sim:7946`;
}

/**
 * The answer to a lookup of `host` asked at `nowMs`: when it arrives, and the
 * IPs it gives (undefined for a failure). `addressOf` finds a node's address.
 */
export function answer(
  lookup: SeedLookup,
  nowMs: number,
  host: string,
  addressOf: (index: number) => Address,
): { atMs: number; ips: string[] | undefined } {
  const atMs = nowMs + Math.max(1, lookup.delayMs ?? 1);
  const kind = atMs >= (lookup.untilMs ?? Infinity) ? "addresses" : lookup.answer ?? "addresses";
  if (kind === "fail") return { atMs, ips: undefined };
  const m = /^node-(\d+)\.sim$/.exec(host);
  if (kind === "nothing" || !m) return { atMs, ips: [] };
  const text = addressOf(Number(m[1])).toString();
  return { atMs, ips: [text.slice(0, text.lastIndexOf(":"))] };
}
