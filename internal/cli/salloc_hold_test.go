package cli

import (
	"errors"
	"net"
	"os/exec"
	"testing"
	"time"
)

// TestAllocHold: the allocation's script (run here by /bin/sh, as a node
// would run it) holds until salloc releases it and exits with the code
// salloc sends; when salloc goes away without a word (killed) it exits 1
// at once; a connection without the secret does not count as the script.
func TestAllocHold(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	env := &Env{Getenv: func(string) string { return "" }}
	cases := []struct {
		name    string
		release func(h *allocHold)
		want    int
	}{
		{"released with 3", func(h *allocHold) { h.Release(3, 10*time.Second) }, 3},
		{"released with 0", func(h *allocHold) { h.Release(0, 10*time.Second) }, 0},
		{"salloc gone", func(h *allocHold) { <-h.got; h.Close() }, 1},
	}
	for _, tc := range cases {
		h, err := newAllocHold(env)
		if err != nil {
			t.Fatal(err)
		}
		// A stranger connecting first must not take the script's place.
		if c, err := net.Dial("tcp", h.ln.Addr().String()); err == nil {
			c.Write([]byte("not-the-secret\n"))
			defer c.Close()
		}
		cmd := exec.Command("/bin/sh", "-c", h.Script("salloc"))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-h.got:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the script did not connect", tc.name)
		}
		select {
		case <-done:
			t.Fatalf("%s: the script ended before the release", tc.name)
		case <-time.After(100 * time.Millisecond): // it holds
		}
		tc.release(h)
		err = <-done
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.want {
			t.Errorf("%s: script exited %d, want %d", tc.name, code, tc.want)
		}
	}
}
