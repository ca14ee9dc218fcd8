package ctld

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a controller clock that tests move forward by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeClock) now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

func (f *fakeClock) advance(d time.Duration) {
	f.mu.Lock()
	f.t = f.t.Add(d)
	f.mu.Unlock()
}

// TestDailyReservationRecurs: a Flags=DAILY reservation created through the
// controller rolls forward one day once its window has passed, as Slurm's
// recurring reservations do, instead of being purged.
func TestDailyReservationRecurs(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Now().Truncate(time.Minute)}
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 2, now: clock.now})
	c.mustResv("create", "reservation", "ReservationName=nightly", "StartTime=now+1hour", "Duration=1:00:00",
		"Nodes=n1", "Users=root", "Flags=DAILY")
	first := clock.now().Add(time.Hour)
	startField := func(at time.Time) string { return "StartTime=" + at.Format("2006-01-02T15:04:05") }
	if out := c.mustResv("show", "reservation", "nightly"); !strings.Contains(out, startField(first)) {
		t.Fatalf("first window: want %s in\n%s", startField(first), out)
	}
	clock.advance(2*time.Hour + 30*time.Minute) // past the first window's end
	next := first.Add(24 * time.Hour)
	c.eventually(5*time.Second, "daily reservation rolled forward", func() bool {
		out, err := c.resvCmd("show", "reservation", "nightly")
		return err == nil && strings.Contains(out, startField(next)) && strings.Contains(out, "Flags=DAILY")
	})
}
