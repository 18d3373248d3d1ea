package main

import "syscall"

// processCPU returns the CPU time, in seconds, this process has used (user and
// system), or 0 when getrusage fails.
func processCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
