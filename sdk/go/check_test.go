package rateguard_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	rateguard "github.com/rateguard/guard/sdk/go"
)

var ctx = context.Background()

func TestCheckAdmitsUpToTheBurstThenDenies(t *testing.T) {
	cls := class(t, rateguard.LimitSpec{Limit: "2/h", Burst: 2})
	c, key := client(t, rateguard.Options{}), unique("tenant")
	var got []rateguard.Decision
	for i := 0; i < 3; i++ {
		d, err := c.Check(ctx, key, &rateguard.CheckOptions{Class: cls})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, d)
	}
	if !got[0].Allowed || !got[1].Allowed || got[2].Allowed {
		t.Fatalf("want admitted, admitted, denied; got %+v", got)
	}
	if got[0].Remaining != 1 || got[0].RetryAfter != 0 {
		t.Fatalf("the first check: %+v", got[0])
	}
	if got[2].RetryAfter <= 0 || got[2].RetryAfter == rateguard.Never || got[2].Failure != nil {
		t.Fatalf("the denial: %+v", got[2])
	}
	if got[2].Reset < got[2].RetryAfter {
		t.Fatalf("the burst is back after a retry is admitted: %+v", got[2])
	}
}

func TestACostAboveTheBurstIsNeverAdmitted(t *testing.T) {
	cls := class(t, rateguard.LimitSpec{Limit: "2/h", Burst: 2})
	d, err := client(t, rateguard.Options{}).Check(ctx, unique("k"), &rateguard.CheckOptions{Class: cls, Cost: 3})
	if err != nil {
		t.Fatal(err)
	}
	if d.Allowed || d.RetryAfter != rateguard.Never {
		t.Fatalf("want a denial with no retry, got %+v", d)
	}
}

func TestCheckWithoutOptionsUsesTheDefaultClass(t *testing.T) {
	d, err := client(t, rateguard.Options{}).Check(ctx, unique("k"), nil)
	if err != nil || !d.Allowed || d.Failure != nil {
		t.Fatalf("got %+v, %v", d, err)
	}
}

func TestCheckAllIsAllOrNothingAndPeekConsumesNothing(t *testing.T) {
	cls := class(t, rateguard.LimitSpec{Limit: "2/h", Burst: 2})
	c, a, b := client(t, rateguard.Options{}), unique("a"), unique("b")
	items := []rateguard.BatchItem{{Key: a, Class: cls}, {Key: b, Class: cls, Cost: 2}}
	first, err := c.CheckAll(ctx, items)
	if err != nil || !first.Allowed || len(first.Decisions) != 2 {
		t.Fatalf("the first batch: %+v, %v", first, err)
	}
	denied, err := c.CheckAll(ctx, items)
	if err != nil {
		t.Fatal(err)
	}
	if denied.Allowed || !denied.Decisions[0].Allowed || denied.Decisions[1].Allowed {
		t.Fatalf("want the batch denied on its second item, got %+v", denied)
	}
	// a had one left, which the denied batch did not take: peek says the
	// next check takes it (and leaves none), twice.
	for i := 0; i < 2; i++ {
		if d, err := c.Peek(ctx, a, &rateguard.KeyOptions{Class: cls}); err != nil || !d.Allowed || d.Remaining != 0 {
			t.Fatalf("peek %d of a: %+v, %v", i, d, err)
		}
	}
	if d, err := c.Peek(ctx, b, &rateguard.KeyOptions{Class: cls}); err != nil || d.Allowed {
		t.Fatalf("peek of b: %+v, %v", d, err)
	}
	if d, err := c.Check(ctx, a, &rateguard.CheckOptions{Class: cls}); err != nil || !d.Allowed {
		t.Fatalf("a's last one: %+v, %v", d, err)
	}
}

func TestConcurrentChecksShareOneLimit(t *testing.T) {
	cls := class(t, rateguard.LimitSpec{Limit: "10/h", Burst: 10})
	c, key := client(t, rateguard.Options{}), unique("shared")
	var admitted, failed atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := c.Check(ctx, key, &rateguard.CheckOptions{Class: cls})
			if err != nil || d.Failure != nil {
				failed.Add(1)
			} else if d.Allowed {
				admitted.Add(1)
			}
		}()
	}
	wg.Wait()
	if admitted.Load() != 10 || failed.Load() != 0 {
		t.Fatalf("want 10 of 40 admitted and no failure, got %d admitted, %d failed", admitted.Load(), failed.Load())
	}
}

func TestKeepsItsConnectionAlive(t *testing.T) {
	c := client(t, rateguard.Options{})
	var reused []bool
	trace := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { reused = append(reused, info.Reused) },
	})
	for i := 0; i < 3; i++ {
		if _, err := c.Check(trace, unique("k"), nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(reused) != 3 || reused[0] || !reused[1] || !reused[2] {
		t.Fatalf("want one connection for three checks, got reused=%v", reused)
	}
}

func TestARefusalIsAClientErrorWhateverThePolicy(t *testing.T) {
	for _, policy := range []rateguard.FailurePolicy{rateguard.FailOpen, rateguard.FailClosed, rateguard.FailError} {
		c := client(t, rateguard.Options{OnFailure: policy})
		_, err := c.Check(ctx, unique("k"), &rateguard.CheckOptions{Cost: -1})
		if ce := clientError(t, err, 400); ce.Field != "/cost" || ce.Problem["status"] != 400.0 {
			t.Fatalf("%s: %+v", policy, ce)
		}
		_, err = c.CheckAll(ctx, []rateguard.BatchItem{{Key: unique("a")}, {Key: unique("b"), Cost: -2}})
		if ce := clientError(t, err, 400); ce.Field != "/items/1/cost" {
			t.Fatalf("%s: %+v", policy, ce)
		}
	}
}

func TestAKeyLongerThanTheSidecarTakesIsA400NamingIt(t *testing.T) {
	c, long := client(t, rateguard.Options{}), strings.Repeat("k", 1025)
	_, err := c.Check(ctx, long, nil)
	if ce := clientError(t, err, 400); ce.Field != "/key" {
		t.Fatalf("check: %+v", ce)
	}
	_, err = c.Peek(ctx, long, nil)
	if ce := clientError(t, err, 400); ce.Field != "/query/key" {
		t.Fatalf("peek: %+v", ce)
	}
	_, err = c.CheckAll(ctx, []rateguard.BatchItem{{Key: "a"}, {Key: long}})
	if ce := clientError(t, err, 400); ce.Field != "/items/1/key" {
		t.Fatalf("batch: %+v", ce)
	}
	_, err = c.CheckAll(ctx, nil)
	if ce := clientError(t, err, 400); ce.Field != "/items" {
		t.Fatalf("an empty batch: %+v", ce)
	}
}

func TestABatchOver64KiBIsA413(t *testing.T) {
	items := make([]rateguard.BatchItem, 80)
	for i := range items {
		items[i] = rateguard.BatchItem{Key: unique(strings.Repeat("k", 1000))}
	}
	_, err := client(t, rateguard.Options{}).CheckAll(ctx, items)
	clientError(t, err, 413)
}

func TestCallerMistakesAreRefusedBeforeAnythingIsSent(t *testing.T) {
	// Nothing listens at the URL: an error other than ErrInvalidArgument
	// would mean the client tried to send.
	c := client(t, rateguard.Options{URL: "http://127.0.0.1:1", OnFailure: rateguard.FailError})
	calls := map[string]error{}
	_, calls["empty key"] = c.Check(ctx, "", nil)
	_, calls["key not UTF-8"] = c.Check(ctx, "tenant:\xff", nil)
	_, calls["class not UTF-8"] = c.Peek(ctx, "k", &rateguard.KeyOptions{Class: "\xc3"})
	_, calls["batch item"] = c.CheckAll(ctx, []rateguard.BatchItem{{Key: "a"}, {Key: ""}})
	calls["key limit"] = c.SetKeyLimit(ctx, "", rateguard.LimitSpec{Limit: "1/s"}, nil)
	calls["key limit's class"] = c.SetKeyLimit(ctx, "k", rateguard.LimitSpec{Limit: "1/s"}, &rateguard.KeyOptions{Class: "\xff"})
	calls["class"] = c.SetClass(ctx, "pro\xff", rateguard.LimitSpec{Limit: "1/s"})
	_, calls["removed class"] = c.RemoveClass(ctx, "\xfe")
	calls["shadow"] = c.SetShadow(ctx, "\xfe", rateguard.LimitSpec{Limit: "1/s"})
	calls["follows"] = c.SetKeyLimitFollows(ctx, "k", "pro\xff", nil)
	_, calls["bulk classes"] = c.SetClasses(ctx, []rateguard.LimitEntry{{Class: "a", Limit: "1/s"}, {Class: "\xff", Limit: "1/s"}})
	_, calls["bulk key limits"] = c.SetKeyLimits(ctx, []rateguard.KeyLimitEntry{{Key: "\xff", Limit: "1/s"}})
	for _, opts := range []rateguard.Options{
		{URL: "127.0.0.1:7947"}, {URL: "ftp://127.0.0.1"}, {URL: "http://127.0.0.1:7947/?q=1"},
		{OnFailure: "maybe"}, {Timeout: -1}, {AdminTimeout: -1}, {AdminToken: "two words"}, {AdminToken: "t\x00"}, {OpsToken: "two words"},
	} {
		_, calls[fmt.Sprintf("options %+v", opts)] =
			rateguard.NewClient(opts)
	}
	for what, err := range calls {
		if !errors.Is(err, rateguard.ErrInvalidArgument) {
			t.Errorf("%s: want ErrInvalidArgument, got %v", what, err)
		}
	}
}

// countingTransport counts the requests it carries for another transport.
type countingTransport struct {
	next http.RoundTripper
	n    atomic.Int32
}

func (t *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.n.Add(1)
	return t.next.RoundTrip(r)
}

func TestAnHTTPClientOfTheCallersOwnCarriesTheCalls(t *testing.T) {
	transport := &countingTransport{next: http.DefaultTransport}
	c := client(t, rateguard.Options{HTTPClient: &http.Client{Transport: transport}})
	if d, err := c.Check(ctx, unique("k"), nil); err != nil || !d.Allowed {
		t.Fatalf("%+v, %v", d, err)
	}
	if ok, err := c.Healthy(ctx); !ok || err != nil {
		t.Fatalf("healthy: %v, %v", ok, err)
	}
	if n := transport.n.Load(); n != 2 {
		t.Fatalf("want 2 requests through the caller's transport, got %d", n)
	}
}
