package rateguard_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// The README's install lines, run as written in a new module beside a copy
// of this folder's path: the module builds against this checkout, with
// nothing fetched.
func TestReadmeInstallsFromACheckout(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)## Install\n.*?```sh\n(.*?)```").FindSubmatch(readme)
	if block == nil {
		t.Fatal("README.md has no ## Install section with a sh block")
	}
	lines := strings.Split(strings.TrimSpace(string(block[1])), "\n")
	if len(lines) == 0 || !strings.Contains(lines[0], "-replace github.com/rateguard/guard/sdk/go=") {
		t.Fatalf("the install block does not start with the replace: %q", lines)
	}
	self, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	app := t.TempDir()
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	env := append(os.Environ(), "GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=", "GOWORK=off")
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(gobin, args...)
		cmd.Dir, cmd.Env = app, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("mod", "init", "example.com/app")
	main := "package main\n\nimport rateguard \"github.com/rateguard/guard/sdk/go\"\n\n" +
		"func main() { _, _ = rateguard.NewClient(rateguard.Options{}) }\n"
	if err := os.WriteFile(filepath.Join(app, "main.go"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, line := range lines {
		fields := strings.Fields(line)
		if len(fields) < 2 || fields[0] != "go" {
			t.Fatalf("not a go command: %q", line)
		}
		for i, f := range fields {
			// The README's checkout beside the module is this folder.
			fields[i] = strings.Replace(f, "=../rateguard/sdk/go", "="+self, 1)
		}
		run(fields[1:]...)
	}
	run("build", "./...")
}

// Nothing here tells to start the sidecar through npx, which does not pass
// SIGTERM on and leaves the sidecar running after it exits.
func TestNoSidecarThroughNpx(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range append(files, "README.md") {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if regexp.MustCompile(`npx (deno|bun|tsx|rateguard)\b`).Match(text) {
			t.Errorf("%s starts the sidecar through npx", file)
		}
	}
}
