/**
 * The options of rateguard, in one place: the options of a single call
 * (which class, what cost), shared by the guard, the sidecar's client and
 * the middleware so that one can stand in for another.
 *
 * @module
 */

/** Which class a key is in: the options of the calls that read one key. */
export interface KeyOptions {
  /**
   * The class; `""` is the default class, and a class this instance does
   * not know is held to the default limit (and counted in `stats()`).
   *
   * @default {""}
   */
  readonly class?: string;
}

/**
 * Options of a check: its class and its cost. The guard and the sidecar's
 * `Client` take the same shape, so one can stand in for the other.
 */
export interface CheckOptions extends KeyOptions {
  /**
   * What the request costs, a whole number from 1 to 4,294,967,295.
   *
   * @default {1}
   */
  readonly cost?: number;
}

/** One check of an all-or-nothing batch: a key, with its class and cost. */
export interface BatchItem extends CheckOptions {
  /** The key, a non-empty string. */
  readonly key: string;
}
