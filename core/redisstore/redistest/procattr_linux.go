//go:build linux

package redistest

import "syscall"

// procAttr makes the kernel kill redis-server when the test binary dies, so that a
// crashed or interrupted test leaves no server behind.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
