//go:build !unix

package pathfinder

import "os/exec"

// killProcessGroup leaves cmd as it is: only the process itself is killed.
func killProcessGroup(*exec.Cmd) {}
