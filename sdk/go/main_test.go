package rateguard_test

// The tests run against a real sidecar: with RATEGUARD_URL set (and
// RATEGUARD_ADMIN_TOKEN, if it has one), that one; without, TestMain starts
// cli.ts from this checkout on a free loopback port, on the runtime that
// RATEGUARD_RUNTIME names (deno, the default; bun; node), and stops it at
// the end.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	rateguard "github.com/rateguard/guard/sdk/go"
)

var (
	sidecarURL string
	adminToken string
	// started is the sidecar TestMain started, nil when RATEGUARD_URL named one.
	started *sidecar
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	sidecarURL, adminToken = os.Getenv("RATEGUARD_URL"), os.Getenv("RATEGUARD_ADMIN_TOKEN")
	if sidecarURL == "" {
		dir, err := os.MkdirTemp("", "rateguard-go-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		adminToken = "go-" + unique("t0ken")
		tokenFile := filepath.Join(dir, "token")
		if err := os.WriteFile(tokenFile, []byte(adminToken+"\n"), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		started, err = startSidecar("--limit", "100", "--admin-token-file", tokenFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "cannot start the sidecar:", err)
			return 1
		}
		defer started.stop()
		sidecarURL = started.url
		// The Example reads it, as a user's program would read its own setting.
		os.Setenv("RATEGUARD_URL", sidecarURL)
	}
	return m.Run()
}

// sidecar is a cli.ts process this test started.
type sidecar struct {
	cmd    *exec.Cmd
	url    string
	done   chan struct{}
	mu     sync.Mutex
	stderr bytes.Buffer
}

// startSidecar starts cli.ts with args on a free loopback port and waits
// for its "listening" line, at most a minute.
func startSidecar(args ...string) (*sidecar, error) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return nil, err
	}
	args = append([]string{"--http", "127.0.0.1:0", "--log-format", "json"}, args...)
	var cmd *exec.Cmd
	switch runtime := os.Getenv("RATEGUARD_RUNTIME"); runtime {
	case "", "deno":
		cmd = exec.Command(filepath.Join(root, "node_modules/.bin/deno"), append([]string{"run", "-A", "cli.ts"}, args...)...)
	case "bun":
		cmd = exec.Command(filepath.Join(root, "node_modules/.bin/bun"), append([]string{"cli.ts"}, args...)...)
	case "node":
		cmd = exec.Command("node", append([]string{"--import", "tsx", "cli.ts"}, args...)...)
	default:
		return nil, fmt.Errorf("RATEGUARD_RUNTIME must be deno, bun or node, got %q", runtime)
	}
	cmd.Dir = root
	dieWithTheTests(cmd)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &sidecar{cmd: cmd, done: make(chan struct{})}
	listening := make(chan string, 1)
	go func() {
		defer close(s.done)
		lines := bufio.NewScanner(pipe)
		lines.Buffer(make([]byte, 64*1024), 1<<20)
		for lines.Scan() {
			line := lines.Text()
			s.mu.Lock()
			s.stderr.WriteString(line + "\n")
			s.mu.Unlock()
			var event struct{ Msg, HTTP string }
			if json.Unmarshal([]byte(line), &event) == nil && event.Msg == "listening" {
				listening <- event.HTTP
			}
		}
		io.Copy(io.Discard, pipe)
		cmd.Wait()
	}()
	select {
	case s.url = <-listening:
		return s, nil
	case <-s.done:
	case <-time.After(time.Minute):
	}
	s.kill()
	return nil, fmt.Errorf("no listening line from %v; stderr: %s", cmd.Args, s.log())
}

func (s *sidecar) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

// stop asks the sidecar to stop, as an orchestrator would, and kills it
// after ten seconds.
func (s *sidecar) stop() {
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.kill()
	}
}

func (s *sidecar) kill() {
	s.cmd.Process.Kill()
	<-s.done
}

// unique is a name no other test, nor an earlier run against the same
// sidecar, uses.
func unique(prefix string) string {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return prefix + "-" + hex.EncodeToString(b)
}

// client is a client of the test's sidecar; a check's timeout is generous,
// as the machine running the tests may be busy.
func client(t *testing.T, opts rateguard.Options) *rateguard.Client {
	t.Helper()
	if opts.URL == "" {
		opts.URL = sidecarURL
	}
	if opts.Timeout == 0 {
		opts.Timeout = 5 * time.Second
	}
	c, err := rateguard.NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func admin(t *testing.T) *rateguard.Client {
	return client(t, rateguard.Options{AdminToken: adminToken})
}

// class makes a class of its own for one test, removed at its end.
func class(t *testing.T, limit rateguard.LimitSpec) string {
	t.Helper()
	name := unique("go")
	a := admin(t)
	if err := a.SetClass(context.Background(), name, limit); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.RemoveClass(context.Background(), name) })
	return name
}

// clientError is err as a *ClientError, failing the test when it is not one.
func clientError(t *testing.T, err error, status int) *rateguard.ClientError {
	t.Helper()
	var ce *rateguard.ClientError
	if !errors.As(err, &ce) {
		t.Fatalf("want a *ClientError %d, got %v", status, err)
	}
	if ce.Status != status {
		t.Fatalf("want status %d, got %d: %v", status, ce.Status, ce)
	}
	if !strings.Contains(ce.Error(), ce.Detail) {
		t.Fatalf("the message %q lacks the detail %q", ce.Error(), ce.Detail)
	}
	return ce
}
