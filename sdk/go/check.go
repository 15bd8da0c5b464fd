package rateguard

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"time"
)

// Never is the RetryAfter of a request that no wait admits: its cost is
// above the burst.
const Never time.Duration = math.MaxInt64

// Decision is what the sidecar decided for one check.
type Decision struct {
	// Allowed says whether the request is admitted.
	Allowed bool
	// Remaining is how many requests of cost 1 would be admitted back to back now.
	Remaining int
	// RetryAfter is how long to wait before a retry may be admitted: 0
	// when admitted, Never if no wait will do.
	RetryAfter time.Duration
	// Reset is how long until the full burst is back.
	Reset time.Duration
	// Failure is set when the sidecar could not be asked: the decision is
	// then the failure policy's.
	Failure *ClientUnavailableError
}

// BatchDecision is a batch's decision, and one per item in order: all
// admitted, or nothing consumed.
type BatchDecision struct {
	Decision
	// Decisions holds one decision per item.
	Decisions []Decision
}

// CheckOptions are a check's class and cost; nil means the default class
// and a cost of 1.
type CheckOptions struct {
	// Class is the key's class; "" is the default class.
	Class string
	// Cost is what the request takes from the limit; 0 means 1.
	Cost int
}

// KeyOptions name a key's class; nil means the default class.
type KeyOptions struct {
	// Class is the key's class; "" is the default class.
	Class string
}

// BatchItem is one check of a batch.
type BatchItem struct {
	// Key is the key, a non-empty string.
	Key string
	// Class is the key's class; "" is the default class.
	Class string
	// Cost is what the request takes from the limit; 0 means 1.
	Cost int
}

// checkBody is a check as the sidecar reads it.
type checkBody struct {
	Key   string `json:"key"`
	Class string `json:"class"`
	Cost  int    `json:"cost"`
}

// decisionWire is a decision as the sidecar sends it; a field it lacks is
// a bad response, not a zero.
type decisionWire struct {
	Allowed      *bool    `json:"allowed"`
	Remaining    *int     `json:"remaining"`
	RetryAfterMs *float64 `json:"retryAfterMs"` // null: never
	ResetMs      *float64 `json:"resetMs"`
}

type batchWire struct {
	decisionWire
	Decisions []decisionWire `json:"decisions"`
}

// Check checks a request for key, consuming it if admitted. When the
// sidecar cannot be asked, the decision is the failure policy's (under
// FailError, the error). A request the sidecar refuses is a *ClientError,
// whatever the policy.
func (c *Client) Check(ctx context.Context, key string, opts *CheckOptions) (Decision, error) {
	if opts == nil {
		opts = &CheckOptions{}
	}
	body, err := check(key, opts.Class, opts.Cost, "key")
	if err != nil {
		return Decision{}, err
	}
	return c.decide(ctx, request{method: "POST", path: "/v1/check", body: body})
}

// CheckAll checks several keys at once, all or nothing: when one is
// denied, none is consumed. The batch's decision says whether all were
// admitted; Decisions has one per item. Failures are as for Check; under
// FailOpen or FailClosed each item's decision is the policy's.
func (c *Client) CheckAll(ctx context.Context, items []BatchItem) (BatchDecision, error) {
	checks := make([]checkBody, len(items))
	for i, item := range items {
		body, err := check(item.Key, item.Class, item.Cost, fmt.Sprintf("items[%d].Key", i))
		if err != nil {
			return BatchDecision{}, err
		}
		checks[i] = body
	}
	failed := func(err error) (BatchDecision, error) {
		d, err := c.failed(err)
		if err != nil {
			return BatchDecision{}, err
		}
		b := BatchDecision{Decision: d, Decisions: make([]Decision, len(items))}
		for i := range b.Decisions {
			b.Decisions[i] = d
		}
		return b, nil
	}
	var w batchWire
	r := request{method: "POST", path: "/v1/check-all", body: map[string]any{"items": checks}}
	if err := c.call(ctx, r, &w); err != nil {
		return failed(err)
	}
	d, ok := w.decision()
	if !ok || len(w.Decisions) != len(items) {
		return failed(c.badResponse(r, fmt.Sprintf("without a decision and one for each of %d items", len(items)), nil))
	}
	b := BatchDecision{Decision: d, Decisions: make([]Decision, len(items))}
	for i, wd := range w.Decisions {
		if b.Decisions[i], ok = wd.decision(); !ok {
			return failed(c.badResponse(r, fmt.Sprintf("without a decision for item %d", i), nil))
		}
	}
	return b, nil
}

// Peek says what the next check of key would decide; it consumes nothing.
// Failures are as for Check.
func (c *Client) Peek(ctx context.Context, key string, opts *KeyOptions) (Decision, error) {
	if opts == nil {
		opts = &KeyOptions{}
	}
	if err := checkText("key", key, false); err != nil {
		return Decision{}, err
	}
	if err := checkText("class", opts.Class, true); err != nil {
		return Decision{}, err
	}
	query := url.Values{"class": {opts.Class}, "key": {key}}.Encode()
	return c.decide(ctx, request{method: "GET", path: "/v1/peek?" + query})
}

// decide makes a check or a peek, the failure policy answering for a
// sidecar that cannot.
func (c *Client) decide(ctx context.Context, r request) (Decision, error) {
	var w decisionWire
	if err := c.call(ctx, r, &w); err != nil {
		return c.failed(err)
	}
	d, ok := w.decision()
	if !ok {
		return c.failed(c.badResponse(r, "without a decision", nil))
	}
	return d, nil
}

func check(key, class string, cost int, what string) (checkBody, error) {
	if err := checkText(what, key, false); err != nil {
		return checkBody{}, err
	}
	if err := checkText("class", class, true); err != nil {
		return checkBody{}, err
	}
	if cost == 0 {
		cost = 1
	}
	// A negative cost goes to the sidecar, which refuses it naming the field.
	return checkBody{Key: key, Class: class, Cost: cost}, nil
}

// failed applies the failure policy to err: a refusal, a bad argument or
// the caller's context ending is returned as it is, whatever the policy.
func (c *Client) failed(err error) (Decision, error) {
	failure, ok := err.(*ClientUnavailableError)
	if !ok || c.onFailure == FailError {
		return Decision{}, err
	}
	if c.onFailure == FailOpen {
		return Decision{Allowed: true, Failure: failure}, nil
	}
	return Decision{RetryAfter: closedRetry, Reset: closedRetry, Failure: failure}, nil
}

// decision is the wire's decision; false when a field is missing.
func (w decisionWire) decision() (Decision, bool) {
	if w.Allowed == nil || w.Remaining == nil || w.ResetMs == nil {
		return Decision{}, false
	}
	retry := Never
	if w.RetryAfterMs != nil {
		retry = millis(*w.RetryAfterMs)
	}
	return Decision{
		Allowed:    *w.Allowed,
		Remaining:  *w.Remaining,
		RetryAfter: retry,
		Reset:      millis(*w.ResetMs),
	}, true
}

// millis turns the sidecar's whole milliseconds into a Duration, a span
// too long for one being Never.
func millis(ms float64) time.Duration {
	if !(ms < float64(Never/time.Millisecond)) {
		return Never
	}
	if ms < 0 {
		return 0
	}
	return time.Duration(math.Ceil(ms * float64(time.Millisecond)))
}
