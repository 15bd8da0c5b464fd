/**
 * What every adapter's subpath (`./hono`, `./express`, `./fetch`) exports
 * besides its own functions, written once.
 *
 * @module
 */

export {
  type ClientIpKey,
  type ClientIpOptions,
  clientIpResolver,
  type ClientKeyOptions,
  UNKNOWN_ADDRESS,
} from "./client_ip.ts";
export type { DecisionLike } from "./fields.ts";
export type { HeaderSet, HeaderStandard, HeaderStyle } from "./field_style.ts";
export { QUOTA_EXCEEDED } from "./denial.ts";
export {
  EMPTY_KEY,
  type KeyOf,
  type Limiter,
  type LimitingOptions,
  type RateLimitInfo,
} from "./limiting.ts";
