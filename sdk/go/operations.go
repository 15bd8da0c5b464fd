package rateguard

import (
	"context"
	"fmt"
	"time"
)

// maxBlock is the longest block the sidecar takes: a year.
const maxBlock = 365 * 24 * time.Hour

// Refund gives back what a check of key took (POST /v1/refund), when the
// work it admitted did not happen: never more than the key still owes on
// the sidecar, and never lifting a block. It says whether the key's state
// changed. No failure policy applies, as nothing is decided: a sidecar
// that cannot be asked is a *ClientUnavailableError.
func (c *Client) Refund(ctx context.Context, key string, opts *CheckOptions) (bool, error) {
	if opts == nil {
		opts = &CheckOptions{}
	}
	body, err := check(key, opts.Class, opts.Cost, "key")
	if err != nil {
		return false, err
	}
	var w struct {
		Refunded *bool `json:"refunded"`
	}
	return c.operation(ctx, request{method: "POST", path: "/v1/refund", body: body, ops: true}, &w, &w.Refunded)
}

// Reset forgets what key owes on the sidecar, a block included
// (POST /v1/reset); it says whether the sidecar had state for the key.
// The operator's block (made with the admin token) is lifted only by a
// client sending the admin token: else a *ClientError 409 with the code
// OperatorBlock.
func (c *Client) Reset(ctx context.Context, key string, opts *KeyOptions) (bool, error) {
	if opts == nil {
		opts = &KeyOptions{}
	}
	body, err := check(key, opts.Class, 1, "key")
	if err != nil {
		return false, err
	}
	var w struct {
		Reset *bool `json:"reset"`
	}
	r := request{method: "POST", path: "/v1/reset", body: map[string]string{"key": body.Key, "class": body.Class}, ops: true}
	return c.operation(ctx, r, &w, &w.Reset)
}

// Block denies every check of key on the sidecar for d, above 0 and at
// most a year (POST /v1/block). It says whether the key is blocked: true
// from a current sidecar, whose blocks live in a set of their own
// (--max-blocks); false only from an older one whose key table had no
// place for it.
func (c *Client) Block(ctx context.Context, key string, d time.Duration, opts *KeyOptions) (bool, error) {
	if opts == nil {
		opts = &KeyOptions{}
	}
	if d <= 0 || d > maxBlock {
		return false, fmt.Errorf("rateguard: a block must last above 0 and at most a year, got %v", d)
	}
	body, err := check(key, opts.Class, 1, "key")
	if err != nil {
		return false, err
	}
	var w struct {
		Blocked *bool `json:"blocked"`
	}
	ms := float64(d) / float64(time.Millisecond)
	r := request{method: "POST", path: "/v1/block", body: map[string]any{"key": body.Key, "class": body.Class, "ms": ms}, ops: true}
	return c.operation(ctx, r, &w, &w.Blocked)
}

// operation makes one call whose answer is one boolean field.
func (c *Client) operation(ctx context.Context, r request, out any, field **bool) (bool, error) {
	if err := c.call(ctx, r, out); err != nil {
		return false, err
	}
	if *field == nil {
		return false, c.badResponse(r, "without its answer", nil)
	}
	return **field, nil
}

// DefaultMaxWait is how long Acquire waits at most when maxWait is 0.
const DefaultMaxWait = 10 * time.Second

// Acquire waits until a check of key is admitted, then takes it, as the
// guard's acquire: each denial's RetryAfter is slept, at most maxWait in
// all (DefaultMaxWait when 0). A wait that cannot fit (a long block, a cost
// above the burst) is answered at once with its denial, as is a decision
// the failure policy made; the context ending ends the wait with its error.
func (c *Client) Acquire(ctx context.Context, key string, opts *CheckOptions, maxWait time.Duration) (Decision, error) {
	if maxWait == 0 {
		maxWait = DefaultMaxWait
	}
	if maxWait < 0 {
		return Decision{}, fmt.Errorf("rateguard: maxWait must not be negative, got %v", maxWait)
	}
	deadline := time.Now().Add(maxWait)
	for {
		d, err := c.Check(ctx, key, opts)
		if err != nil || d.Allowed || d.Failure != nil || d.RetryAfter > time.Until(deadline) {
			return d, err
		}
		timer := time.NewTimer(d.RetryAfter)
		select {
		case <-ctx.Done():
			timer.Stop()
			return Decision{}, ctx.Err()
		case <-timer.C:
		}
	}
}
