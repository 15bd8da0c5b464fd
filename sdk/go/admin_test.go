package rateguard_test

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	rateguard "github.com/rateguard/guard/sdk/go"
)

func TestClassesKeyLimitsAndShadows(t *testing.T) {
	a, cls, key := admin(t), unique("tariff"), unique("tenant")
	must(t, a.SetClass(ctx, cls, rateguard.LimitSpec{Limit: "10/s"}))
	classes, err := a.Classes(ctx)
	must(t, err)
	if classes[0].Class != "" || !contains(classes, rateguard.LimitEntry{Class: cls, Limit: "10/s", Burst: 1}) {
		t.Fatalf("classes: %+v", classes)
	}
	must(t, a.SetKeyLimit(ctx, key, rateguard.LimitSpec{Limit: "5/min", Burst: 3}, &rateguard.KeyOptions{Class: cls}))
	must(t, a.SetKeyLimitFollows(ctx, key, cls, nil))
	limits, err := a.KeyLimits(ctx)
	must(t, err)
	if !contains(limits, rateguard.KeyLimitEntry{Class: cls, Key: key, Limit: "5/min", Burst: 3}) ||
		!contains(limits, rateguard.KeyLimitEntry{Class: "", Key: key, Follows: cls}) {
		t.Fatalf("key limits: %+v", limits)
	}
	// The key's own limit applies to its checks: a burst of 3, not 1.
	c := client(t, rateguard.Options{})
	for i, want := range []bool{true, true, true, false} {
		if d, err := c.Check(ctx, key, &rateguard.CheckOptions{Class: cls}); err != nil || d.Allowed != want {
			t.Fatalf("check %d under the key's limit: %+v, %v", i, d, err)
		}
	}
	for _, k := range []string{cls, ""} {
		if removed, err := a.RemoveKeyLimit(ctx, key, &rateguard.KeyOptions{Class: k}); !removed || err != nil {
			t.Fatalf("removing the key limit in %q: %v, %v", k, removed, err)
		}
	}
	if removed, err := a.RemoveKeyLimit(ctx, key, &rateguard.KeyOptions{Class: cls}); removed || err != nil {
		t.Fatalf("removing it again: %v, %v", removed, err)
	}
	must(t, a.SetShadow(ctx, cls, rateguard.LimitSpec{Limit: "1/s"}))
	shadows, err := a.Shadows(ctx)
	must(t, err)
	if !contains(shadows, rateguard.LimitEntry{Class: cls, Limit: "1/s", Burst: 1}) {
		t.Fatalf("shadows: %+v", shadows)
	}
	for _, want := range []bool{true, false} {
		if removed, err := a.RemoveShadow(ctx, cls); removed != want || err != nil {
			t.Fatalf("removing the shadow: %v, %v; want %v", removed, err, want)
		}
	}
	for _, want := range []bool{true, false} {
		if removed, err := a.RemoveClass(ctx, cls); removed != want || err != nil {
			t.Fatalf("removing the class: %v, %v; want %v", removed, err, want)
		}
	}
}

func TestBulkReplacementIsAllOrNothing(t *testing.T) {
	a := admin(t)
	before, err := a.Classes(ctx)
	must(t, err)
	t.Cleanup(func() { a.SetClasses(ctx, before) })
	x, y := unique("x"), unique("y")
	bad := append(append([]rateguard.LimitEntry{}, before...),
		rateguard.LimitEntry{Class: x, Limit: "1/s"}, rateguard.LimitEntry{Class: y, Limit: "often"})
	_, err = a.SetClasses(ctx, bad)
	if ce := clientError(t, err, 400); !strings.HasPrefix(ce.Field, "/classes/"+strconv.Itoa(len(before)+1)) {
		t.Fatalf("want the bad entry named, got %+v", ce)
	}
	if now, _ := a.Classes(ctx); !reflect.DeepEqual(now, before) {
		t.Fatalf("a refused replacement changed the classes: %+v, were %+v", now, before)
	}
	bad[len(bad)-1].Limit = "2/s"
	now, err := a.SetClasses(ctx, bad)
	must(t, err)
	if !contains(now, rateguard.LimitEntry{Class: x, Limit: "1/s", Burst: 1}) ||
		!contains(now, rateguard.LimitEntry{Class: y, Limit: "2/s", Burst: 1}) {
		t.Fatalf("after the replacement: %+v", now)
	}

	key := unique("tenant")
	limits, err := a.SetKeyLimits(ctx, []rateguard.KeyLimitEntry{
		{Class: x, Key: key, Limit: "3/s", Burst: 2}, {Class: y, Key: key, Follows: x},
	})
	must(t, err)
	if len(limits) != 2 || !contains(limits, rateguard.KeyLimitEntry{Class: y, Key: key, Follows: x}) {
		t.Fatalf("key limits: %+v", limits)
	}
	shadows, err := a.SetShadows(ctx, []rateguard.LimitEntry{{Class: x, Limit: "1/min", Burst: 1}})
	must(t, err)
	if len(shadows) != 1 || shadows[0] != (rateguard.LimitEntry{Class: x, Limit: "1/min", Burst: 1}) {
		t.Fatalf("shadows: %+v", shadows)
	}
	// Empty lists clear them (sent as [], which the sidecar takes, not null).
	for _, err := range []error{second(a.SetKeyLimits(ctx, nil)), second(a.SetShadows(ctx, nil))} {
		must(t, err)
	}
	if l, _ := a.KeyLimits(ctx); len(l) != 0 {
		t.Fatalf("key limits left: %+v", l)
	}
	if s, _ := a.Shadows(ctx); len(s) != 0 {
		t.Fatalf("shadows left: %+v", s)
	}
}

func TestAnUnknownClassIsA404WithItsCode(t *testing.T) {
	a, nope := admin(t), unique("nope")
	err := a.SetShadow(ctx, nope, rateguard.LimitSpec{Limit: "1/s"})
	if ce := clientError(t, err, 404); ce.Code != "UnknownClass" {
		t.Fatalf("shadow of an unknown class: %+v", ce)
	}
	if removed, err := a.RemoveClass(ctx, nope); removed || err != nil {
		t.Fatalf("removing an unknown class: %v, %v", removed, err)
	}
	_, err = a.RemoveClass(ctx, "")
	if ce := clientError(t, err, 400); ce.Field != "/query/class" {
		t.Fatalf("removing the default class: %+v", ce)
	}
}

func TestDryRunStatsKeyStatsAndMetrics(t *testing.T) {
	a := admin(t)
	before, err := a.DryRun(ctx)
	must(t, err)
	t.Cleanup(func() { a.SetDryRun(ctx, before) })
	must(t, a.SetDryRun(ctx, true))
	if on, err := a.DryRun(ctx); !on || err != nil {
		t.Fatalf("dry run: %v, %v", on, err)
	}
	stats, err := a.Stats(ctx)
	must(t, err)
	if stats["dryRun"] != true || stats["running"] != true {
		t.Fatalf("stats: %v", stats)
	}
	must(t, a.SetDryRun(ctx, false))

	cls := class(t, rateguard.LimitSpec{Limit: "7/h", Burst: 7})
	key := unique("seen")
	if _, err := client(t, rateguard.Options{}).Check(ctx, key, &rateguard.CheckOptions{Class: cls}); err != nil {
		t.Fatal(err)
	}
	ks, err := a.KeyStats(ctx, key, &rateguard.KeyOptions{Class: cls})
	must(t, err)
	if ks == nil || ks.Limit != "7/h burst 7" || ks.Shadow != "" || ks.RequestsPerSec <= 0 {
		t.Fatalf("key stats: %+v", ks)
	}
	if ks, err := a.KeyStats(ctx, unique("unseen"), nil); ks != nil || err != nil {
		t.Fatalf("a key with no state: %+v, %v", ks, err)
	}
	text, err := a.Metrics(ctx)
	must(t, err)
	if !strings.Contains(text, "\nrateguard_checks_total{") {
		t.Fatalf("metrics: %.300s", text)
	}
	for name, probe := range map[string]func() (bool, error){
		"ready": func() (bool, error) { return a.Ready(ctx) }, "healthy": func() (bool, error) { return a.Healthy(ctx) },
	} {
		if ok, err := probe(); !ok || err != nil {
			t.Fatalf("%s: %v, %v", name, ok, err)
		}
	}
}

func TestAdminCallsNeedTheToken(t *testing.T) {
	if adminToken == "" {
		t.Skip("the sidecar has no admin token")
	}
	// Read from a file, with its newline.
	if _, err := client(t, rateguard.Options{AdminToken: adminToken + "\n"}).Classes(ctx); err != nil {
		t.Fatalf("the token with a newline: %v", err)
	}
	for _, token := range []string{"", "wrong"} {
		c := client(t, rateguard.Options{AdminToken: token})
		_, err := c.Classes(ctx)
		clientError(t, err, 401)
		clientError(t, c.SetDryRun(ctx, true), 401)
		_, err = c.Metrics(ctx)
		clientError(t, err, 401)
		// The request path and the probes stay open.
		if d, err := c.Check(ctx, unique("k"), nil); err != nil || !d.Allowed {
			t.Fatalf("check without the token: %+v, %v", d, err)
		}
		if ok, err := c.Ready(ctx); !ok || err != nil {
			t.Fatalf("ready without the token: %v, %v", ok, err)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func second[T any](_ T, err error) error { return err }

func contains[T comparable](list []T, want T) bool {
	for _, e := range list {
		if e == want {
			return true
		}
	}
	return false
}
