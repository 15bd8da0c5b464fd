package rateguard_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	rateguard "github.com/rateguard/guard/sdk/go"
)

// silent listens and accepts, and never answers: a sidecar that hangs.
func silent(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	held := make(chan net.Conn, 64)
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			held <- conn
		}
	}()
	t.Cleanup(func() {
		l.Close()
		for len(held) > 0 {
			(<-held).Close()
		}
	})
	return "http://" + l.Addr().String()
}

// refusing is an address nothing listens at: a sidecar that is down.
func refusing(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// answering is a server that answers every request with status and body.
func answering(t *testing.T, status int, body string) string {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	t.Cleanup(s.Close)
	return s.URL
}

func TestFailurePolicies(t *testing.T) {
	sidecars := []struct {
		name string
		url  string
		code rateguard.UnavailableCode
	}{
		{"hangs", silent(t), rateguard.CodeTimeout},
		{"is down", refusing(t), rateguard.CodeUnreachable},
		{"answers 503", answering(t, 503, `{"status":503,"detail":"stopping"}`), rateguard.CodeServerError},
		{"answers 500 without JSON", answering(t, 500, "oops"), rateguard.CodeServerError},
		{"answers 200 without JSON", answering(t, 200, "<html>"), rateguard.CodeBadResponse},
		{"answers 200 without a decision", answering(t, 200, `{"ok":true}`), rateguard.CodeBadResponse},
		{"answers a redirect", answering(t, 302, ""), rateguard.CodeBadResponse},
		{"answers 2 MiB", answering(t, 200, `{"allowed":true,"x":"`+strings.Repeat("x", 2<<20)+`"}`), rateguard.CodeBadResponse},
	}
	calls := map[string]func(*rateguard.Client) (rateguard.Decision, error){
		"Check": func(c *rateguard.Client) (rateguard.Decision, error) { return c.Check(ctx, "k", nil) },
		"Peek":  func(c *rateguard.Client) (rateguard.Decision, error) { return c.Peek(ctx, "k", nil) },
		"CheckAll": func(c *rateguard.Client) (rateguard.Decision, error) {
			b, err := c.CheckAll(ctx, []rateguard.BatchItem{{Key: "a"}, {Key: "b"}})
			if err == nil && (len(b.Decisions) != 2 || b.Decisions[0] != b.Decision || b.Decisions[1] != b.Decision) {
				t.Errorf("each item's decision is the batch's failure decision: %+v", b)
			}
			return b.Decision, err
		},
	}
	for _, s := range sidecars {
		s := s
		t.Run(s.name, func(t *testing.T) {
			for _, policy := range []rateguard.FailurePolicy{rateguard.FailOpen, rateguard.FailClosed, rateguard.FailError} {
				// Short for the one that hangs; long for the others, which
				// answer, however busy the machine.
				timeout := 5 * time.Second
				if s.code == rateguard.CodeTimeout {
					timeout = 100 * time.Millisecond
				}
				c := client(t, rateguard.Options{URL: s.url, Timeout: timeout, AdminTimeout: timeout, OnFailure: policy})
				for name, call := range calls {
					d, err := call(c)
					switch policy {
					case rateguard.FailOpen:
						if err != nil || !d.Allowed || d.Failure == nil || d.Failure.Code != s.code {
							t.Errorf("%s %s: want admitted with a %s failure, got %+v, %v", name, policy, s.code, d, err)
						}
					case rateguard.FailClosed:
						if err != nil || d.Allowed || d.RetryAfter != time.Second || d.Failure == nil || d.Failure.Code != s.code {
							t.Errorf("%s %s: want denied for a second with a %s failure, got %+v, %v", name, policy, s.code, d, err)
						}
					default:
						if code := unavailable(err); code != s.code || d != (rateguard.Decision{}) {
							t.Errorf("%s %s: want a %s error, got %+v, %v", name, policy, s.code, d, err)
						}
					}
				}
				// An admin call fails with the error, whatever the policy.
				if _, err := c.Classes(ctx); unavailable(err) != s.code {
					t.Errorf("Classes %s: want a %s error, got %v", policy, s.code, err)
				}
			}
		})
	}
}

// unavailable is the code of err, a *ClientUnavailableError, or "".
func unavailable(err error) rateguard.UnavailableCode {
	var ue *rateguard.ClientUnavailableError
	if !errors.As(err, &ue) || !errors.Is(err, rateguard.ErrUnavailable) || !strings.HasPrefix(ue.Error(), "rateguard sidecar: ") {
		return ""
	}
	return ue.Code
}

func TestTheProbesSayNotReadyOrUnavailable(t *testing.T) {
	c := client(t, rateguard.Options{URL: answering(t, 503, "joining\n")})
	if ok, err := c.Ready(ctx); ok || err != nil {
		t.Fatalf("ready while joining: %v, %v", ok, err)
	}
	c = client(t, rateguard.Options{URL: refusing(t)})
	if ok, err := c.Healthy(ctx); ok || unavailable(err) != rateguard.CodeUnreachable {
		t.Fatalf("healthy when down: %v, %v", ok, err)
	}
}

func TestTheCallersContextEndingIsItsErrorWhateverThePolicy(t *testing.T) {
	url := silent(t)
	c := client(t, rateguard.Options{URL: url, Timeout: 5 * time.Second, OnFailure: rateguard.FailOpen})
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if d, err := c.Check(cancelled, "k", nil); !errors.Is(err, context.Canceled) || errors.Is(err, rateguard.ErrUnavailable) || d.Allowed {
		t.Fatalf("a cancelled context: %+v, %v", d, err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if d, err := c.Peek(short, "k", nil); !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, rateguard.ErrUnavailable) || d.Allowed {
		t.Fatalf("the caller's deadline first: %+v, %v", d, err)
	}
}

// A sidecar may close a kept-alive connection just as a check goes out on
// it; the check is sent again on a new connection rather than failing.
func TestACheckOnAConnectionClosedUnderItIsSentAgain(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	t.Cleanup(func() { l.Close() })
	answer := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 59\r\n\r\n" +
		`{"allowed":true,"remaining":4,"retryAfterMs":0,"resetMs":1}`
	var requests atomic.Int32
	go func() {
		for first := true; ; first = false {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func(conn net.Conn, closesOnSecond bool) {
				defer conn.Close()
				in := bufio.NewReader(conn)
				for n := 1; ; n++ {
					req, err := http.ReadRequest(in)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					requests.Add(1)
					if closesOnSecond && n == 2 {
						return // read, and closed without an answer
					}
					conn.Write([]byte(answer))
				}
			}(conn, first)
		}
	}()
	c := client(t, rateguard.Options{URL: "http://" + l.Addr().String(), OnFailure: rateguard.FailError})
	for i := 0; i < 3; i++ {
		if d, err := c.Check(ctx, "k", nil); err != nil || !d.Allowed {
			t.Fatalf("check %d: %+v, %v", i, d, err)
		}
	}
	if n := requests.Load(); n != 4 {
		t.Fatalf("want 4 requests for 3 checks (one sent again), got %d", n)
	}
}
