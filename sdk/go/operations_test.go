package rateguard_test

import (
	"testing"
	"time"

	rateguard "github.com/rateguard/guard/sdk/go"
)

func TestRefundResetAndBlock(t *testing.T) {
	cls := class(t, rateguard.LimitSpec{Limit: "2/h", Burst: 2})
	// The test sidecar has an admin token and no ops token: the operations take the admin token.
	c, key := client(t, rateguard.Options{Timeout: 5 * time.Second, AdminToken: adminToken}), unique("tenant")
	in := &rateguard.CheckOptions{Class: cls}
	allowed := func() bool {
		d, err := c.Check(ctx, key, in)
		if err != nil {
			t.Fatal(err)
		}
		return d.Allowed
	}
	if !allowed() || !allowed() || allowed() {
		t.Fatal("want the burst of 2, then a denial")
	}
	if ok, err := c.Refund(ctx, key, in); err != nil || !ok {
		t.Fatalf("refund: %v, %v", ok, err)
	}
	if !allowed() {
		t.Fatal("the refunded request is admitted")
	}
	keyIn := &rateguard.KeyOptions{Class: cls}
	if ok, err := c.Reset(ctx, key, keyIn); err != nil || !ok {
		t.Fatalf("reset: %v, %v", ok, err)
	}
	if ok, err := c.Reset(ctx, unique("never-seen"), keyIn); err != nil || ok {
		t.Fatalf("reset of a key with no state: %v, %v", ok, err)
	}
	if ok, err := c.Block(ctx, key, time.Minute, keyIn); err != nil || !ok {
		t.Fatalf("block: %v, %v", ok, err)
	}
	d, err := c.Check(ctx, key, in)
	if err != nil || d.Allowed || d.RetryAfter < time.Minute {
		t.Fatalf("a blocked key's check: %+v, %v", d, err)
	}
	if ks, err := admin(t).KeyStats(ctx, key, keyIn); err != nil || ks == nil || ks.BlockedForMs < 59_000 {
		t.Fatalf("the block in the key's stats: %+v, %v", ks, err)
	}
	if _, err := c.Block(ctx, key, 0, keyIn); err == nil {
		t.Fatal("a block of 0 is refused")
	}
	_, err = c.Refund(ctx, key, &rateguard.CheckOptions{Class: cls, Cost: -1})
	if e := clientError(t, err, 400); e.Problem["field"] != "/cost" {
		t.Fatalf("want the problem to name /cost, got %+v", e.Problem)
	}
}

func TestOperationsTakeAToken(t *testing.T) {
	if adminToken == "" {
		t.Skip("a sidecar with no token takes the operations from anyone")
	}
	// The sidecar has an admin token and no ops token: the operations need the admin token.
	for _, opts := range []rateguard.Options{{}, {OpsToken: "wrong"}, {AdminToken: adminToken, OpsToken: "wrong"}} {
		opts.Timeout = 5 * time.Second
		_, err := client(t, opts).Block(ctx, unique("k"), time.Minute, nil)
		clientError(t, err, 401)
	}
	// The ops token, when given, is what the operations send.
	c := client(t, rateguard.Options{Timeout: 5 * time.Second, OpsToken: adminToken})
	if ok, err := c.Block(ctx, unique("k"), time.Second, nil); err != nil || !ok {
		t.Fatalf("a block with the ops token: %v, %v", ok, err)
	}
}

func TestAcquireWaitsWithinMaxWait(t *testing.T) {
	fast := class(t, rateguard.LimitSpec{Limit: "1000/s", Burst: 1})
	c, key := client(t, rateguard.Options{Timeout: 5 * time.Second}), unique("job")
	in := &rateguard.CheckOptions{Class: fast}
	if _, err := c.Check(ctx, key, in); err != nil {
		t.Fatal(err)
	}
	if d, err := c.Acquire(ctx, key, in, 5*time.Second); err != nil || !d.Allowed {
		t.Fatalf("acquire on a fast limit: %+v, %v", d, err)
	}
	slow := &rateguard.CheckOptions{Class: class(t, rateguard.LimitSpec{Limit: "1/h", Burst: 1})}
	if _, err := c.Check(ctx, key, slow); err != nil {
		t.Fatal(err)
	}
	if d, err := c.Acquire(ctx, key, slow, time.Second); err != nil || d.Allowed {
		t.Fatalf("an hour's wait does not fit in a second: %+v, %v", d, err)
	}
	if _, err := c.Acquire(ctx, key, slow, -time.Second); err == nil {
		t.Fatal("a negative wait is refused")
	}
}
