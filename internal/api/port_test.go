package api

import (
	"net"
	"strconv"
	"testing"
)

// TestFreePortBelowEphemeralRange checks that the chosen ports are
// bindable and lie outside the range the kernel gives to ":0" listeners
// and outgoing connections (the source of the port clashes seen in CI).
func TestFreePortBelowEphemeralRange(t *testing.T) {
	lo := ephemeralLow()
	for range 20 {
		p, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if lo > 11000 && (p < 10000 || p >= lo) {
			t.Fatalf("port %d outside [10000, %d)", p, lo)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Fatalf("port %d not bindable: %v", p, err)
		}
		ln.Close()
	}
}
