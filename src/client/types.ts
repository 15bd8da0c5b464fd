/**
 * What the sidecar's client takes and gives: its options, its decisions,
 * the limits its admin calls take and list.
 *
 * @module
 */

import type { Limit } from "../core/limit.ts";
import type { ClientUnavailableError } from "./errors.ts";

/** A decision as the client returns it. */
export interface ClientDecision {
  /** Whether the request is admitted. */
  readonly allowed: boolean;
  /** Requests of cost 1 admitted back to back now. */
  readonly remaining: number;
  /** Milliseconds before a retry may be admitted; `Infinity` if never. */
  readonly retryAfterMs: number;
  /** Milliseconds until the full burst is back. */
  readonly resetMs: number;
  /** Set when the sidecar could not be asked, and the decision is the failure policy's. */
  readonly failure?: ClientUnavailableError;
}

/** A batch's decision, and one per item in order. */
export interface ClientBatchDecision extends ClientDecision {
  /** One decision per item; all allowed, or nothing consumed. */
  readonly decisions: readonly ClientDecision[];
}

/** What a check answers when the sidecar cannot be asked. */
export type FailurePolicy = "open" | "closed" | "throw";

/** Options of a {@link Client}. */
export interface ClientOptions {
  /**
   * The sidecar.
   *
   * @default {"http://127.0.0.1:7947"}
   */
  readonly url?: string;
  /**
   * How long a check may take, ms: the sidecar is on loopback.
   *
   * @default {50}
   */
  readonly timeoutMs?: number;
  /**
   * How long an admin call may take, ms.
   *
   * @default {5000}
   */
  readonly adminTimeoutMs?: number;
  /**
   * How long the client's first call may spend setting up its connection,
   * ms, before the call's own timeout starts: it first sends `/healthz` a
   * request (answered 405, changing nothing), which opens the kept-alive
   * connection the checks then use. On Node the
   * first fetch of a process also loads its HTTP parser, about 50 ms, as
   * long as a check's whole default timeout.
   *
   * @default {1000}
   */
  readonly connectTimeoutMs?: number;
  /**
   * When a check times out, cannot connect, or gets a 5xx: `"open"` admits,
   * `"closed"` denies with a retry in a second, `"throw"` rejects. The
   * decision carries the {@link ClientUnavailableError} in `failure`.
   *
   * @default {"open"}
   */
  readonly onFailure?: FailurePolicy;
  /**
   * The admin token, sent as `Authorization: Bearer` on admin calls, and on
   * refund, reset and block when the client has no `opsToken`.
   *
   * @default {none}
   */
  readonly adminToken?: string;
  /**
   * The ops token, sent as `Authorization: Bearer` on refund, reset and
   * block, for a sidecar with `--ops-token-file`. Without it those calls
   * send the admin token, if the client has one: its blocks are then the
   * operator's, which a service's reset does not lift.
   *
   * @default {none}
   */
  readonly opsToken?: string;
}

/** A limit for the admin calls: a {@link Limit}, its text (`"10/s"`), or text and burst. */
export type LimitSpec = Limit | string | { readonly limit: string; readonly burst?: number };

/** A limit as the sidecar lists it. */
export interface ClientLimitEntry {
  /** The class, `""` for the default. */
  readonly class: string;
  /** Count and period, such as `10/s`. */
  readonly limit: string;
  /** The burst as it applies. */
  readonly burst: number;
}

/** A key limit as the sidecar lists it: a limit of its own, or the class it follows. */
export interface ClientKeyLimitEntry {
  /** The class. */
  readonly class: string;
  /** The key. */
  readonly key: string;
  /** Its own limit, if it has one. */
  readonly limit?: string;
  /** Its own burst, with `limit`. */
  readonly burst?: number;
  /** The class it follows, if it follows one. */
  readonly follows?: string;
}
