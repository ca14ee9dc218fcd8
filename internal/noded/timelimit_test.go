package noded

import (
	"errors"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestSetTimeLimit changes running jobs' limits as `scontrol update job
// TimeLimit=` does: a lowered limit already used up ends the job TIMEOUT
// at once, a raised one keeps it running past its launch limit.
func TestSetTimeLimit(t *testing.T) {
	a := newAgent(t)
	cases := []struct {
		name          string
		launch, set   int64
		wantRunningAt time.Duration // still RUNNING this long after the change
		wantTimeout   bool
	}{
		{name: "lowered below the time used", launch: 600, set: 1, wantTimeout: true},
		{name: "raised past the launch limit", launch: 2, set: 600, wantRunningAt: 3 * time.Second},
		{name: "made unlimited", launch: 2, set: api.TimeInfinite, wantRunningAt: 3 * time.Second},
	}
	// All jobs run side by side: one wait covers every case.
	for i, c := range cases {
		req := batch(t, uint32(2100+i), "sleep 30")
		req.TimeLimitSec = c.launch
		launch(t, a, req)
	}
	time.Sleep(1100 * time.Millisecond) // a second used
	changed := time.Now()
	for i, c := range cases {
		st, err := a.SetTimeLimit(uint32(2100+i), api.TimeLimitRequest{TimeLimitSec: c.set})
		if err != nil || st.TimeLimitSec != c.set {
			t.Fatalf("%s: SetTimeLimit: %+v %v", c.name, st, err)
		}
	}
	for i, c := range cases {
		id := uint32(2100 + i)
		if c.wantTimeout {
			if final := waitFinal(t, a, id, 4*time.Second); final.State != api.StateTimeout {
				t.Errorf("%s: %s, want TIMEOUT", c.name, final.State)
			}
			continue
		}
		time.Sleep(time.Until(changed.Add(c.wantRunningAt)))
		if st, _ := a.Job(id); st.State != api.StateRunning {
			t.Errorf("%s: %s after %v, want RUNNING", c.name, st.State, c.wantRunningAt)
		}
	}
	t.Run("refusals", func(t *testing.T) {
		if _, err := a.SetTimeLimit(4242, api.TimeLimitRequest{TimeLimitSec: 5}); !errors.Is(err, ErrUnknownJob) {
			t.Errorf("unknown job: %v", err)
		}
		if _, err := a.SetTimeLimit(2100, api.TimeLimitRequest{TimeLimitSec: 0}); !errors.Is(err, ErrBadRequest) {
			t.Errorf("zero limit: %v", err)
		}
	})
}
