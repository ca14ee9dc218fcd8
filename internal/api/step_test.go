package api

import (
	"bytes"
	"net/http"
	"testing"
	"time"
)

// FuzzStepFrame: the frame reader never panics and accepts back what the
// writer wrote.
func FuzzStepFrame(f *testing.F) {
	var b bytes.Buffer
	WriteStepFrame(&b, StepFrameStdout, 3, []byte("hi\n"))
	f.Add(b.Bytes())
	f.Add([]byte{9, 0, 0, 0, 0, 255, 255, 255, 255})
	f.Fuzz(func(t *testing.T, data []byte) {
		kind, task, p, err := ReadStepFrame(bytes.NewReader(data))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := WriteStepFrame(&out, kind, task, p); err != nil || !bytes.HasPrefix(data, out.Bytes()) {
			t.Fatalf("round trip of %x: %x %v", data, out.Bytes(), err)
		}
	})
}

// TestStepCredential: the credential verifies for its own step's I/O
// request only, and not once older than MaxClockSkew.
func TestStepCredential(t *testing.T) {
	key := []byte("step-credential-test-key-0123456789")
	now := time.Unix(1_800_000_000, 0)
	cred := SignStepIO(key, 7, 2, now)
	check := func(path string, at time.Time) error {
		r, _ := http.NewRequest(http.MethodGet, "http://node1:6818"+path, nil)
		r.Header.Set(SignatureHeader, cred)
		_, err := VerifyRequest(r, key, nil, at)
		return err
	}
	for _, c := range []struct {
		name string
		path string
		at   time.Time
		ok   bool
	}{
		{"own step", StepPath(PathAgentStepIO, 7, 2), now, true},
		{"another step", StepPath(PathAgentStepIO, 7, 3), now, false},
		{"another endpoint", StepPath(PathAgentStepWait, 7, 2), now, false},
		{"expired", StepPath(PathAgentStepIO, 7, 2), now.Add(MaxClockSkew + time.Second), false},
	} {
		if err := check(c.path, c.at); (err == nil) != c.ok {
			t.Errorf("%s: err %v, want ok=%v", c.name, err, c.ok)
		}
	}
}
