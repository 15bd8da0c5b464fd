/**
 * Which standard of rate limit fields an adapter sends, as its `headers`
 * option says it: the names a caller picks from, and the one reading of
 * the option into the set `fields.ts` writes. The standards themselves,
 * field by field, are `fields.ts`'s.
 *
 * @module
 */

/**
 * One standard of rate limit fields: `"draft-10"` (`RateLimit-Policy:
 * "name";q=100;w=60` and `RateLimit: "name";r=49;t=3`, the wire format of
 * drafts 10 to 12), `"draft-7"` (`RateLimit: limit=100, remaining=49,
 * reset=3` and `RateLimit-Policy: 100;w=60`), `"draft-6"`
 * (`RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` and
 * `RateLimit-Policy: 100;w=60`), or `"legacy"` (`X-RateLimit-Limit`,
 * `-Remaining`, `-Reset`; reset in seconds from now).
 */
export type HeaderStandard = "draft-10" | "draft-7" | "draft-6" | "legacy";

/**
 * Which rate limit fields to send: one {@link HeaderStandard}, or one IETF
 * draft and `"legacy"` together; `"ietf"` is `"draft-10"`, `"both"` is
 * draft-10 and legacy, `"none"` sends none (`Retry-After` still goes with
 * a denial).
 */
export type HeaderStyle =
  | HeaderStandard
  | readonly HeaderStandard[]
  | "ietf"
  | "both"
  | "none";

/** A {@link HeaderStyle} resolved: at most one IETF draft, and whether the legacy trio goes too. */
export interface HeaderSet {
  /** The IETF draft whose fields go, if any. */
  readonly draft: "draft-10" | "draft-7" | "draft-6" | undefined;
  /** Whether the `X-RateLimit-*` trio goes. */
  readonly legacy: boolean;
}

const DRAFTS = ["draft-10", "draft-7", "draft-6"] as const;

/**
 * Reads a `headers` option: a {@link HeaderStyle}, `true` (draft-10) or
 * `false` (none), the default draft-10 when left out.
 *
 * @param style The option's value.
 * @param who The option's owner, for the message.
 * @returns The fields to send.
 * @throws {RangeError} when it names no standard, or two IETF drafts (they share field names).
 */
export function headerSet(style: HeaderStyle | boolean | undefined, who: string): HeaderSet {
  if (style === undefined || style === true || style === "ietf") {
    return { draft: "draft-10", legacy: false };
  }
  if (style === false || style === "none") return { draft: undefined, legacy: false };
  if (style === "both") return { draft: "draft-10", legacy: true };
  const list: readonly unknown[] = typeof style === "string" ? [style] : style;
  const known = Array.isArray(list) &&
    list.every((s) => s === "legacy" || DRAFTS.includes(s as "draft-10"));
  const drafts = known ? list.filter((s) => s !== "legacy") : [];
  if (!known || drafts.length > 1) {
    throw new RangeError(
      `${who}: headers must be "draft-10", "draft-7", "draft-6", "legacy", one draft with ` +
        `"legacy", "ietf", "both" or "none", got ${JSON.stringify(style)}`,
    );
  }
  return { draft: drafts[0] as HeaderSet["draft"], legacy: list.includes("legacy") };
}
