package rateguard_test

import (
	"os/exec"
	"syscall"
)

// A test binary that dies (a panic, go test's -timeout) runs no deferred
// stop: the kernel then kills the sidecars it started.
func dieWithTheTests(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
