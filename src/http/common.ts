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
export type { DecisionLike, HeaderSet, HeaderStandard, HeaderStyle } from "./fields.ts";
export {
  EMPTY_KEY,
  type KeyOf,
  type Limiter,
  type LimitingOptions,
  QUOTA_EXCEEDED,
  type RateLimitInfo,
} from "./limiting.ts";
