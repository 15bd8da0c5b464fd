/**
 * rateguard: one rate limit per key across a whole fleet of service
 * instances, decided locally in nanoseconds and shared by UDP gossip.
 *
 * @example
 * ```ts
 * import { Limit } from "@rateguard/guard";
 * const limit = Limit.perMinute(1_000);
 * console.assert(limit.count() === 1_000);
 * ```
 *
 * @module
 */
export {};
