package ctld

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// buildSluice builds ./cmd/sluice into dir.
func buildSluice(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "sluice")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/sluice-hpc/sluice/cmd/sluice")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build sluice: %v\n%s", err, out)
	}
	return bin
}

// upProcess is `sluice up --conf` running as a child process.
type upProcess struct {
	cmd *exec.Cmd
	log *os.File
}

func startUp(t *testing.T, bin, confPath, logPath string) *upProcess {
	t.Helper()
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "up", "--conf", confPath)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &upProcess{cmd: cmd, log: log}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait()
		log.Close()
	})
	return p
}

func (p *upProcess) kill9() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.cmd.Wait()
}

// TestSIGKILLRecovery kills `sluice up` (controller and agents in one
// process) with SIGKILL while 40 jobs pend and 8 run, starts it again:
// every job is still there with its state, the running ones finish (they
// are not started again), the pending ones run, each exactly once. The
// full acceptance figures (200 pending, 20 running, separate ctld and
// noded, PostgreSQL) are TestAcceptRestartController's.
func TestSIGKILLRecovery(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	t0 := time.Now()
	bin := buildSluice(t, dir)
	t.Logf("build %v", time.Since(t0))
	state := filepath.Join(dir, "state")
	work := filepath.Join(dir, "work")
	os.MkdirAll(work, 0o755)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	confPath := filepath.Join(dir, "slurm.conf")
	os.WriteFile(confPath, []byte(fmt.Sprintf(`ClusterName=kill
SlurmctldHost=localhost
SlurmctldPort=%d
StateSaveLocation=%s
SelectTypeParameters=CR_CPU
KillWait=1
SlurmdTimeout=30
NodeName=k[1-2] CPUs=4 RealMemory=1000 State=UNKNOWN
PartitionName=all Nodes=k[1-2] Default=YES MaxTime=INFINITE State=UP
`, port, state)), 0o644)
	logPath := filepath.Join(dir, "up.log")
	up := startUp(t, bin, confPath, logPath)
	cl := api.NewUnixClient(filepath.Join(state, api.SocketFile))
	ctx := context.Background()
	waitFor(t, 20*time.Second, "controller up with 2 idle nodes", logPath, func() bool {
		res, err := cl.Nodes(ctx)
		if err != nil {
			return false
		}
		idle := 0
		for _, n := range res.Nodes {
			if n.StateShort == "idle" {
				idle++
			}
		}
		return idle == 2
	})
	submit := func(cmd string) uint32 {
		res, err := cl.Submit(ctx, api.SubmitRequest{Spec: api.JobSpec{Name: "k", WorkDir: work,
			Script: "#!/bin/sh\n" + cmd + "\n", Environment: []string{"PATH=" + os.Getenv("PATH")}}})
		if err != nil {
			t.Fatalf("submit: %v", err)
		}
		return res.JobID
	}
	var ids []uint32
	// Long enough that all 8 run at once and still run at the kill on a
	// loaded machine, where one agent may launch seconds after the other.
	for i := 0; i < 8; i++ {
		ids = append(ids, submit("echo run >> runs-$SLURM_JOB_ID; sleep 15"))
	}
	waitFor(t, 20*time.Second, "8 jobs running", logPath, func() bool { return countState(cl, "RUNNING") == 8 })
	for i := 0; i < 40; i++ {
		ids = append(ids, submit("echo run >> runs-$SLURM_JOB_ID"))
	}
	if n := countState(cl, "PENDING"); n != 40 {
		t.Fatalf("%d pending before the kill, want 40", n)
	}
	t.Logf("submitted %v", time.Since(t0))
	up.kill9()
	startUp(t, bin, confPath, logPath)
	waitFor(t, 20*time.Second, "controller back", logPath, func() bool { _, err := cl.Ping(ctx); return err == nil })
	res, err := cl.Jobs(ctx, api.JobQuery{})
	if err != nil || len(res.Jobs) != 48 {
		t.Fatalf("after restart: %d jobs (%v), want 48", len(res.Jobs), err)
	}
	t.Logf("restarted %v", time.Since(t0))
	waitFor(t, 90*time.Second, "every job completed", logPath, func() bool { return countState(cl, "COMPLETED") == 48 })
	t.Logf("done %v", time.Since(t0))
	for _, id := range ids {
		data, _ := os.ReadFile(filepath.Join(work, "runs-"+idStr(id)))
		if got := strings.Count(string(data), "run"); got != 1 {
			t.Errorf("job %d ran %d times", id, got)
		}
	}
	next := submit("true")
	if next != ids[len(ids)-1]+1 {
		t.Errorf("next job id %d, want %d", next, ids[len(ids)-1]+1)
	}
}

func countState(cl *api.Client, state string) int {
	res, err := cl.Jobs(context.Background(), api.JobQuery{})
	if err != nil {
		return -1
	}
	n := 0
	for _, j := range res.Jobs {
		if j.State == state {
			n++
		}
	}
	return n
}

func waitFor(t *testing.T, d time.Duration, what, logPath string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !f() {
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logPath)
			if len(log) > 4000 {
				log = log[len(log)-4000:]
			}
			t.Fatalf("timed out after %v waiting for %s; log:\n%s", d, what, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
