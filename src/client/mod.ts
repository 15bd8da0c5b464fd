/**
 * A client of the rateguard sidecar, for TypeScript services that do not
 * embed the guard: it asks the sidecar on loopback over `fetch`, keeps the
 * connection alive, gives up after 50 ms by default, and lets the caller
 * choose whether a sidecar that cannot answer admits (`onFailure: "open"`),
 * denies (`"closed"`) or throws.
 *
 * This is the subpath `@rateguard/guard/client`; it loads neither Hono nor
 * the guard's runtime.
 *
 * @example
 * ```ts ignore
 * import { Client } from "@rateguard/guard/client";
 *
 * const client = new Client({ url: "http://127.0.0.1:7947", timeoutMs: 50 });
 * const d = await client.check("tenant:42", { class: "pro" });
 * if (!d.allowed) console.log(`denied, retry in ${Math.ceil(d.retryAfterMs / 1000)} s`);
 * await client.setKeyLimit("tenant:42", "2000/s", { class: "pro" });
 * ```
 *
 * @module
 */
export { Client } from "./client.ts";
export { ClientError, ClientUnavailableError } from "./errors.ts";
export type { ClientUnavailableCode } from "./errors.ts";
export { OperationalError } from "../core/errors.ts";
export type { BatchItem, CheckOptions, KeyOptions } from "../core/options.ts";
export type {
  ClientBatchDecision,
  ClientDecision,
  ClientKeyLimitEntry,
  ClientLimitEntry,
  ClientOptions,
  FailurePolicy,
  LimitSpec,
} from "./types.ts";
