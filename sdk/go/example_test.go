package rateguard_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	rateguard "github.com/rateguard/guard/sdk/go"
)

// A service asks its sidecar before it serves a request. The tests run
// this against the sidecar they start (the runtime's binary on cli.ts,
// stopped with SIGINT at the end); run alone, it needs one listening at
// RATEGUARD_URL, or at DefaultURL when that is unset, started itself
// rather than through npx (which leaves it running after SIGTERM), from
// the repository's root:
//
//	node_modules/.bin/deno run -A cli.ts --limit 100/s
func Example() {
	client, err := rateguard.NewClient(rateguard.Options{
		URL:       os.Getenv("RATEGUARD_URL"), // "" is http://127.0.0.1:7947
		Timeout:   250 * time.Millisecond,     // 50 ms when left out
		OnFailure: rateguard.FailOpen,         // a sidecar that cannot answer admits
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()

	d, err := client.Check(ctx, "example:tenant:42", &rateguard.CheckOptions{Cost: 1})
	if err != nil {
		log.Fatal(err) // the sidecar refused the request as malformed: a bug
	}
	if d.Failure != nil {
		fmt.Println("admitted without asking the sidecar:", d.Failure)
	}
	if !d.Allowed {
		fmt.Printf("denied: retry in %v\n", d.RetryAfter)
		return
	}
	fmt.Println("admitted")

	// A batch is all or nothing: both keys are admitted, or neither is consumed.
	b, err := client.CheckAll(ctx, []rateguard.BatchItem{{Key: "example:ip:203.0.113.7"}, {Key: "example:user:7"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("batch admitted:", b.Allowed, len(b.Decisions))
	// Output:
	// admitted
	// batch admitted: true 2
}
