package api

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// FreePort returns a TCP port on 127.0.0.1 that is free now and is not in
// the kernel's ephemeral range. A port that is written into slurm.conf and
// bound later (by `sluice up`, the benchmarks and the tests, and again at
// every restart) must stay free in between: the kernel hands out ephemeral
// ports to every outgoing connection and every ":0" listener on the
// machine, so a port taken from that range can be gone by the time the
// controller binds it. Below the range only another deliberate choice can
// take it, which is what Slurm's fixed SlurmctldPort=6817 relies on too.
func FreePort() (int, error) {
	lo := ephemeralLow()
	const floor = 10000
	if lo > floor+1000 {
		for range 64 {
			p := floor + rand.IntN(lo-floor)
			if portFree(p) {
				return p, nil
			}
		}
	}
	// No room below the range (or all tries taken): let the kernel choose.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// ephemeralLow reads the first port of the ephemeral range (Linux's
// default 32768 when the file cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n <= 0 || n > 65535 {
		return 32768
	}
	return n
}

func portFree(p int) bool {
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}
