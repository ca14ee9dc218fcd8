package multihost

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// jobID reads the id from sbatch's "Submitted batch job N".
func jobID(t *testing.T, r Result) string {
	t.Helper()
	m := regexp.MustCompile(`Submitted batch job (\d+)`).FindStringSubmatch(r.Out)
	if r.Code != 0 || m == nil {
		t.Fatalf("sbatch: exit %d\n%s%s", r.Code, r.Out, r.Err)
	}
	return m[1]
}

// jobState is the job's state as squeue (then sacct) on the login host
// sees it.
func (b *Bed) jobState(id string) string {
	r := b.Login(10*time.Second, "squeue -h -j "+id+" -o %T 2>/dev/null || true")
	if s := strings.TrimSpace(r.Out); s != "" {
		return s
	}
	r = b.Login(10*time.Second, "sacct -n -X -P -j "+id+" -o State")
	return strings.TrimSpace(strings.Split(strings.TrimSpace(r.Out), "\n")[0])
}

// waitState waits until job id is in one of states.
func (b *Bed) waitState(id string, limit time.Duration, states ...string) string {
	b.t.Helper()
	var st string
	b.waitFor(limit, "job "+id+" in "+strings.Join(states, "/"), func() bool {
		st = b.jobState(id)
		for _, s := range states {
			if strings.HasPrefix(st, s) {
				return true
			}
		}
		return false
	})
	return st
}

// TestMultiHostSbatchN3: a batch job submitted from the login host with
// -N3 runs its script on n1 (its output file in n1's own /tmp, not on the
// login host) and a step of three tasks, one per node host.
func TestMultiHostSbatchN3(t *testing.T) {
	t.Parallel()
	b := NewBed(t, "")
	id := jobID(t, b.Login(20*time.Second,
		`sbatch -N3 -o /tmp/job-%j.out --wrap 'echo batch on $(hostname) nodes $SLURM_JOB_NODELIST; srun -l hostname'`))
	st := b.waitState(id, 40*time.Second, "COMPLETED", "FAILED", "CANCELLED", "NODE_FAIL", "TIMEOUT")
	out := b.Host("n1").Run(5*time.Second, nil, "cat /tmp/job-"+id+".out")
	t.Logf("sbatch -N3 job %s ended %s; its output on n1:\n%s%s", id, st, out.Out, out.Err)
	if st != "COMPLETED" {
		t.Errorf("job %s ended %s, want COMPLETED", id, st)
	}
	if !strings.Contains(out.Out, "batch on n1 nodes n[1-3]") {
		t.Errorf("batch script output on n1 = %q, want it to run on n1 with nodes n[1-3]", out.Out)
	}
	for _, want := range []string{"0: n1", "1: n2", "2: n3"} {
		if !strings.Contains(out.Out, want) {
			t.Errorf("srun -l hostname in the job: no %q in %q", want, out.Out)
		}
	}
	if r := b.Login(5*time.Second, "ls /tmp/job-"+id+".out"); r.Code == 0 {
		t.Errorf("the job's output file is on the login host too: /tmp is not private")
	}
}
