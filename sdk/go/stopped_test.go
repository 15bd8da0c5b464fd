//go:build unix

package rateguard_test

import (
	"syscall"
	"testing"
	"time"

	rateguard "github.com/rateguard/guard/sdk/go"
)

// A real sidecar that stops answering (paused), comes back, then goes
// away: the client's kept-alive connection and its failure policy, end to end.
func TestASidecarThatPausesThenStops(t *testing.T) {
	if started == nil {
		t.Skip("RATEGUARD_URL names a sidecar this test did not start")
	}
	s, err := startSidecar("--limit", "100")
	must(t, err)
	t.Cleanup(s.kill)
	opts := rateguard.Options{URL: s.url, Timeout: 5 * time.Second}
	c := client(t, opts)
	if d, err := c.Check(ctx, unique("k"), nil); err != nil || !d.Allowed || d.Failure != nil {
		t.Fatalf("before: %+v, %v", d, err)
	}
	// Short only while paused: the kernel still takes the connection, and
	// no one answers on it.
	opts.Timeout, opts.OnFailure = 200*time.Millisecond, rateguard.FailClosed
	closed := client(t, opts)

	must(t, s.cmd.Process.Signal(syscall.SIGSTOP))
	d, err := closed.Check(ctx, unique("k"), nil)
	must(t, s.cmd.Process.Signal(syscall.SIGCONT))
	if err != nil || d.Allowed || d.Failure == nil || d.Failure.Code != rateguard.CodeTimeout {
		t.Fatalf("paused: want a denial for a timeout, got %+v, %v", d, err)
	}
	if d, err := c.Check(ctx, unique("k"), nil); err != nil || !d.Allowed || d.Failure != nil {
		t.Fatalf("back: %+v, %v", d, err)
	}

	s.stop()
	d, err = closed.Check(ctx, unique("k"), nil)
	if err != nil || d.Allowed || d.Failure == nil || d.Failure.Code != rateguard.CodeUnreachable {
		t.Fatalf("stopped: want a denial for no connection, got %+v, %v", d, err)
	}
	if d, err := c.Peek(ctx, unique("k"), nil); err != nil || !d.Allowed || d.Failure.Code != rateguard.CodeUnreachable {
		t.Fatalf("stopped, open: %+v, %v", d, err)
	}
}
