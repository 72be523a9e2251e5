//go:build unix

package pathfinder

import (
	"os/exec"
	"syscall"
)

// killProcessGroup makes cmd the leader of a new process group and has its
// cancellation kill the whole group.
func killProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
