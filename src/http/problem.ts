/**
 * Problem details (RFC 9457) for the sidecar's refusals: every bad request
 * gets an `application/problem+json` body that names the field at fault.
 *
 * @module
 */

/** The body of an `application/problem+json` response. */
export interface Problem {
  /** A URI naming the kind of problem; `about:blank` for plain HTTP statuses. */
  readonly type: string;
  /** A short summary of the kind of problem. */
  readonly title: string;
  /** The HTTP status. */
  readonly status: number;
  /** What was wrong with this request. */
  readonly detail: string;
  /** The request field at fault, as a JSON pointer such as `/cost`. */
  readonly field?: string;
  /** A stable code for a refusal callers handle, such as `TooManyKeyLimits`. */
  readonly code?: string;
}

/** The media type of problem details. */
export const PROBLEM_TYPE = "application/problem+json";

/** Optional members of a problem. */
export interface ProblemOptions {
  /** The request field at fault, as a JSON pointer. */
  readonly field?: string | undefined;
  /** A stable code for a refusal callers handle. */
  readonly code?: string;
}

/** A problem response. */
export function problemResponse(
  status: number,
  detail: string,
  options: ProblemOptions = {},
): Response {
  const { field, code } = options;
  const body: Problem = {
    type: "about:blank",
    title: TITLES[status] ?? "Error",
    status,
    detail,
    ...(field === undefined ? {} : { field }),
    ...(code === undefined ? {} : { code }),
  };
  return new Response(JSON.stringify(body), { status, headers: { "content-type": PROBLEM_TYPE } });
}

const TITLES: Readonly<Record<number, string>> = {
  400: "Bad Request",
  401: "Unauthorized",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  409: "Conflict",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  500: "Internal Server Error",
};

/** A request body that failed validation, naming the field. */
export class BadRequest extends Error {
  /** The JSON pointer of the field at fault. */
  readonly field: string | undefined;

  /** A validation failure of `field`. */
  constructor(detail: string, field?: string) {
    super(detail);
    this.name = "BadRequest";
    this.field = field;
  }
}

/** A request body over the sidecar's bound: answered with 413. */
export class ContentTooLarge extends Error {
  /** A body larger than the bound. */
  constructor(detail: string) {
    super(detail);
    this.name = "ContentTooLarge";
  }
}

/**
 * A request body that stopped before its end: the client hung up or was
 * timed out. Nobody reads the answer, so it is no error of the sidecar's
 * and is not logged.
 */
export class BodyCut extends Error {
  /** A body cut off. */
  constructor(detail: string) {
    super(detail);
    this.name = "BodyCut";
  }
}
