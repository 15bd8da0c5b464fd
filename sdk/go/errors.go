package rateguard

import (
	"errors"
	"fmt"
)

// ErrInvalidArgument is wrapped by the errors a call returns for a caller's
// mistake found before anything is sent: an empty key, text that is not
// valid UTF-8, a bad option. Test for it with errors.Is.
var ErrInvalidArgument = errors.New("rateguard: invalid argument")

// ErrUnavailable matches every *ClientUnavailableError under errors.Is, for
// callers that do not care which failure it was.
var ErrUnavailable = errors.New("rateguard: sidecar unavailable")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidArgument, fmt.Sprintf(format, args...))
}

// ClientError is the sidecar refusing a request (a 4xx answer), with the
// problem details it answered with. Whatever the failure policy, a check
// the sidecar refuses returns it: a malformed request is a bug to fix, not
// a load to shed.
type ClientError struct {
	// Status is the HTTP status, 400 to 499.
	Status int
	// Detail says what was wrong, for people.
	Detail string
	// Field is the JSON pointer to the offending field ("/cost",
	// "/items/3/key", "/query/key"), when the sidecar names one.
	Field string
	// Code is a stable code for refusals a caller handles
	// ("UnknownClass", "TooManyKeyLimits", "TooManyClasses"), or "".
	Code string
	// Problem is the whole problem body.
	Problem map[string]any
}

func (e *ClientError) Error() string {
	msg := fmt.Sprintf("rateguard sidecar: %d %s", e.Status, e.Detail)
	if e.Field != "" {
		msg += " (" + e.Field + ")"
	}
	return msg
}

// UnavailableCode says why the sidecar could not be asked; the values are
// stable across versions, and the same as the TypeScript client's.
type UnavailableCode string

const (
	// CodeTimeout: no answer within the timeout.
	CodeTimeout UnavailableCode = "Timeout"
	// CodeUnreachable: no connection (refused, reset, no route).
	CodeUnreachable UnavailableCode = "Unreachable"
	// CodeServerError: the sidecar answered 5xx.
	CodeServerError UnavailableCode = "ServerError"
	// CodeBadResponse: the sidecar answered with a body that is not what it sends.
	CodeBadResponse UnavailableCode = "BadResponse"
)

// ClientUnavailableError is an operational failure: the sidecar could not
// be asked. A check's Decision carries it in Failure under FailOpen and
// FailClosed; under FailError, and on every admin call, it is returned.
type ClientUnavailableError struct {
	// Code says what went wrong.
	Code UnavailableCode
	// Message says it for people.
	Message string
	// Err is the underlying error (of the transport, say), if any.
	Err error
}

func (e *ClientUnavailableError) Error() string { return e.Message }

// Unwrap returns the underlying error.
func (e *ClientUnavailableError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrUnavailable) true.
func (e *ClientUnavailableError) Is(target error) bool { return target == ErrUnavailable }
