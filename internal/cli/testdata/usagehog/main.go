// Command usagehog is the workload of the usage accounting tests: it
// holds a known amount of memory, burns a known CPU time and lasts a
// known wall time, so that sacct's MaxRSS, TotalCPU and Elapsed can be
// checked against what the job really used.
package main

import (
	"flag"
	"runtime"
	"syscall"
	"time"
)

func main() {
	mb := flag.Int("mb", 100, "megabytes to allocate and touch")
	cpu := flag.Duration("cpu", time.Second, "CPU time to burn")
	wall := flag.Duration("wall", 0, "total run time (sleeps after burning)")
	flag.Parse()
	start := time.Now()
	runtime.GOMAXPROCS(1)
	b := make([]byte, *mb<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	x := 0
	for used() < *cpu {
		for i := 0; i < 1000000; i++ {
			x += i
		}
	}
	if d := *wall - time.Since(start); d > 0 {
		time.Sleep(d)
	}
	runtime.KeepAlive(b)
	runtime.KeepAlive(x)
}

// used is the process's CPU time so far.
func used() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
