package noded

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// fakeController is a test double of the controller's agent endpoints that
// records what agents send. Only the controller is faked: the agents and
// their jobs are real.
type fakeController struct {
	*httptest.Server
	mu         sync.Mutex
	registers  []api.RegisterRequest
	heartbeats []api.Heartbeat
	events     []api.JobEvent
	failEvents bool // answer 503 to event deliveries
	forget     bool // answer the next heartbeat with Reregister (a restarted controller)
}

func newFakeController(t *testing.T) *fakeController {
	fc := &fakeController{}
	mux := http.NewServeMux()
	record := func(dst func(*http.Request) error, reply any) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if err := dst(r); err != nil {
				api.WriteAgentError(w, http.StatusServiceUnavailable, err.Error())
				return
			}
			api.WriteAgentJSON(w, http.StatusOK, reply)
		}
	}
	mux.HandleFunc("POST "+api.PathAgentRegister, record(func(r *http.Request) error {
		var req api.RegisterRequest
		err := api.DecodeAgentRequest(r, &req)
		fc.mu.Lock()
		fc.registers = append(fc.registers, req)
		fc.mu.Unlock()
		return err
	}, api.RegisterResponse{HeartbeatIntervalSec: 1}))
	mux.HandleFunc("POST "+api.PathAgentHeartbeat, func(w http.ResponseWriter, r *http.Request) {
		var hb api.Heartbeat
		if err := api.DecodeAgentRequest(r, &hb); err != nil {
			api.WriteAgentError(w, http.StatusBadRequest, err.Error())
			return
		}
		fc.mu.Lock()
		fc.heartbeats = append(fc.heartbeats, hb)
		resp := api.HeartbeatResponse{Reregister: fc.forget}
		fc.forget = false
		fc.mu.Unlock()
		api.WriteAgentJSON(w, http.StatusOK, resp)
	})
	mux.HandleFunc("POST "+api.PathAgentEvents, record(func(r *http.Request) error {
		var ev api.JobEvents
		err := api.DecodeAgentRequest(r, &ev)
		fc.mu.Lock()
		defer fc.mu.Unlock()
		if fc.failEvents {
			return errors.New("controller busy")
		}
		fc.events = append(fc.events, ev.Events...)
		return err
	}, struct{}{}))
	fc.Server = httptest.NewServer(api.RequireSignature(testClusterKey, nil, mux))
	t.Cleanup(fc.Close)
	return fc
}

// waitEvent waits for the controller to receive the final event of a job.
func (fc *fakeController) waitEvent(t *testing.T, id uint32, within time.Duration) api.JobEvent {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		fc.mu.Lock()
		for _, e := range fc.events {
			if e.Job.JobID == id {
				fc.mu.Unlock()
				return e
			}
		}
		fc.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no event for job %d within %v", id, within)
	return api.JobEvent{}
}

func (fc *fakeController) setFailEvents(v bool) {
	fc.mu.Lock()
	fc.failEvents = v
	fc.mu.Unlock()
}

// TestAgentOverHTTP drives an agent the way the controller will: signed
// calls through api.AgentClient, registration and job events received by
// the controller.
func TestAgentOverHTTP(t *testing.T) {
	fc := newFakeController(t)
	a := newAgent(t, withController(fc.URL), withListener())
	ctx := context.Background()
	client := api.NewAgentClient(a.Addr(), testClusterKey, nil)

	info, err := client.Node(ctx)
	if err != nil || info.Name != "node01" || info.Resources.CPUs != 4 || info.Resources.RealMemoryMB != 8192 {
		t.Fatalf("node info %+v, err %v", info, err)
	}
	st, err := client.Launch(ctx, batch(t, 1000, "sleep 0.2; exit 7"))
	if err != nil || st.State != api.StateRunning || st.PID == 0 {
		t.Fatalf("launch: %+v %v", st, err)
	}
	ev := fc.waitEvent(t, 1000, 3*time.Second)
	if ev.Node != "node01" || ev.Job.State != api.StateFailed || ev.Job.ExitCode != "7:0" {
		t.Fatalf("event %+v", ev)
	}
	// Acknowledged jobs are forgotten by the agent.
	waitGone(t, a, 1000)

	fc.mu.Lock()
	reg := fc.registers
	fc.mu.Unlock()
	if len(reg) == 0 || reg[0].Node.Name != "node01" || reg[0].Node.Addr != a.Addr() {
		t.Fatalf("registration %+v", reg)
	}

	t.Run("suspend and resume over HTTP", func(t *testing.T) {
		st, _ := client.Launch(ctx, batch(t, 1001, "sleep 30"))
		waitSleeping(t, st.PID)
		if st, err := client.Suspend(ctx, 1001); err != nil || st.State != api.StateSuspended {
			t.Fatalf("suspend: %+v %v", st, err)
		}
		if s := waitGroupStopped(st.PID)[st.PID]; s != 'T' {
			t.Fatalf("leader state %c", s)
		}
		if st, err := client.Resume(ctx, 1001); err != nil || st.State != api.StateRunning {
			t.Fatalf("resume: %+v %v", st, err)
		}
		client.Terminate(ctx, 1001, api.TerminateRequest{})
		if ev := fc.waitEvent(t, 1001, 3*time.Second); ev.Job.State != api.StateCancelled {
			t.Fatalf("event %+v", ev)
		}
	})
	t.Run("errors map to HTTP statuses", func(t *testing.T) {
		cases := []struct {
			name   string
			call   func() error
			status int
		}{
			{"unknown job", func() error { _, err := client.Suspend(ctx, 4242); return err }, 404},
			{"no script", func() error { _, err := client.Launch(ctx, api.LaunchRequest{JobID: 5}); return err }, 400},
			{"bad signal", func() error {
				client.Launch(ctx, batch(t, 1002, "sleep 30"))
				_, err := client.Signal(ctx, 1002, api.SignalRequest{Signal: 99})
				client.Terminate(ctx, 1002, api.TerminateRequest{})
				return err
			}, 400},
			{"forged key", func() error {
				_, err := api.NewAgentClient(a.Addr(), []byte("some other cluster's key!!"), nil).Jobs(ctx)
				return err
			}, 401},
		}
		for _, c := range cases {
			var ae *api.AgentError
			if err := c.call(); !errors.As(err, &ae) || ae.Status != c.status {
				t.Errorf("%s: got %v, want HTTP %d", c.name, err, c.status)
			}
		}
		fc.waitEvent(t, 1002, 3*time.Second)
	})
}

func waitGone(t *testing.T, a *Agent, id uint32) {
	t.Helper()
	for i := 0; i < 300; i++ {
		if _, err := a.Job(id); errors.Is(err, ErrUnknownJob) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("job %d still held after the controller acknowledged it", id)
}

// TestReattachAfterAgentRestart stops an agent while its jobs run and
// starts a new one on the same spool: it finds the jobs by their pids and
// start times, reports the one that ends, and still enforces the time limit
// of the other.
func TestReattachAfterAgentRestart(t *testing.T) {
	fc := newFakeController(t)
	spool := t.TempDir()
	a1 := newAgent(t, withSpool(spool))
	short := launch(t, a1, batch(t, 1100, "sleep 2; echo finished"))
	limited := batch(t, 1101, "sleep 30")
	limited.TimeLimitSec = 1
	launch(t, a1, limited)
	a1.Close()
	stoppedAt := time.Now()

	a2 := newAgent(t, withSpool(spool), withController(fc.URL))
	st, err := a2.Job(1100)
	if err != nil || st.PID != short.PID || st.State != api.StateRunning {
		t.Fatalf("after restart: %+v %v (pid before %d)", st, err, short.PID)
	}
	ev := fc.waitEvent(t, 1100, 4*time.Second)
	if ev.Job.State != api.StateCompleted || ev.Job.ExitCode != "0:0" {
		t.Fatalf("event %+v", ev)
	}
	ev = fc.waitEvent(t, 1101, 3*time.Second)
	if ev.Job.State != api.StateTimeout {
		t.Fatalf("limited job after restart: %+v", ev)
	}
	t.Logf("restarted agent re-attached 2 jobs %v after the old one stopped: %s, %s", time.Since(stoppedAt).Round(time.Millisecond), "COMPLETED", ev.Job.State)
}

// TestEventsRetriedUntilAcknowledged checks that a job's end is not lost
// while the controller refuses events, nor across an agent restart.
func TestEventsRetriedUntilAcknowledged(t *testing.T) {
	fc := newFakeController(t)
	fc.setFailEvents(true)
	spool := t.TempDir()
	a1 := newAgent(t, withSpool(spool), withController(fc.URL))
	launch(t, a1, batch(t, 1200, "true"))
	waitFinal(t, a1, 1200, 3*time.Second)
	time.Sleep(200 * time.Millisecond)
	a1.Close()
	fc.setFailEvents(false)
	a2 := newAgent(t, withSpool(spool), withController(fc.URL))
	if ev := fc.waitEvent(t, 1200, 3*time.Second); ev.Job.State != api.StateCompleted {
		t.Fatalf("event %+v", ev)
	}
	waitGone(t, a2, 1200)
}

// TestLostJobReported covers a job whose supervisor and processes vanished
// while no agent was running (say the machine rebooted): the restarted
// agent reports it FAILED instead of waiting forever.
func TestLostJobReported(t *testing.T) {
	spool := t.TempDir()
	a1 := newAgent(t, withSpool(spool))
	st := launch(t, a1, batch(t, 1300, "sleep 30"))
	a1.Close()
	rec := a1.jobs[1300].rec
	killProcess(t, rec.ShimPID)
	killProcess(t, -st.PID)
	a2 := newAgent(t, withSpool(spool))
	final := waitFinal(t, a2, 1300, 3*time.Second)
	if final.State != api.StateFailed || final.Reason == "" {
		t.Fatalf("got %+v", final)
	}
}

// TestReregistersWhenControllerForgets: a restarted controller answers a
// heartbeat with Reregister and gets a fresh registration carrying the
// node's running jobs.
func TestReregistersWhenControllerForgets(t *testing.T) {
	fc := newFakeController(t)
	a := newAgent(t, withController(fc.URL))
	launch(t, a, batch(t, 1900, "sleep 30"))
	count := func() (int, int) {
		fc.mu.Lock()
		defer fc.mu.Unlock()
		return len(fc.registers), len(fc.heartbeats)
	}
	deadline := time.Now().Add(4 * time.Second)
	for r, h := count(); r < 1 || h < 1; r, h = count() {
		if time.Now().After(deadline) {
			t.Fatalf("registrations %d heartbeats %d", r, h)
		}
		time.Sleep(20 * time.Millisecond)
	}
	fc.mu.Lock()
	fc.forget = true
	fc.mu.Unlock()
	for r, _ := count(); r < 2; r, _ = count() {
		if time.Now().After(deadline) {
			t.Fatal("no second registration after Reregister")
		}
		time.Sleep(20 * time.Millisecond)
	}
	fc.mu.Lock()
	last := fc.registers[len(fc.registers)-1]
	fc.mu.Unlock()
	if len(last.Jobs) != 1 || last.Jobs[0].JobID != 1900 || last.Jobs[0].State != api.StateRunning {
		t.Fatalf("registration jobs %+v", last.Jobs)
	}
}

// TestDeliveredRunNotLaunchedAgain: once the controller has acknowledged a
// run's end, a late launch of that same run (a relaunch after a controller
// restart that raced the dead controller's launch) is refused, not run a
// second time; the job's next run (a requeue) still launches.
func TestDeliveredRunNotLaunchedAgain(t *testing.T) {
	fc := newFakeController(t)
	a := newAgent(t, withController(fc.URL))
	req := batch(t, 1300, "true")
	launch(t, a, req)
	if ev := fc.waitEvent(t, 1300, 3*time.Second); ev.Job.State != api.StateCompleted {
		t.Fatalf("event %+v", ev)
	}
	waitGone(t, a, 1300)
	if st, err := a.Launch(req); !errors.Is(err, ErrConflict) {
		t.Fatalf("late launch of the delivered run: %+v, %v", st, err)
	}
	req.RestartCount = 1
	if st := launch(t, a, req); st.RestartCount != 1 {
		t.Fatalf("next run: %+v", st)
	}
}
