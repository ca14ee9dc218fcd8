package multihost

import (
	"os/exec"
	"os/user"
	"regexp"
	"sort"
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
		`sbatch -N3 -o /tmp/job-%j.out --wrap 'echo batch on $(hostname) nodes $SLURM_JOB_NODELIST from $SLURM_SUBMIT_HOST; srun -l hostname'`))
	st := b.waitState(id, 40*time.Second, "COMPLETED", "FAILED", "CANCELLED", "NODE_FAIL", "TIMEOUT")
	out := b.Host("n1").Run(5*time.Second, nil, "cat /tmp/job-"+id+".out")
	t.Logf("sbatch -N3 job %s ended %s; its output on n1:\n%s%s", id, st, out.Out, out.Err)
	if st != "COMPLETED" {
		t.Errorf("job %s ended %s, want COMPLETED", id, st)
	}
	if !strings.Contains(out.Out, "batch on n1 nodes n[1-3] from login\n") {
		t.Errorf("batch script output on n1 = %q, want it to run on n1 with nodes n[1-3], submitted from login", out.Out)
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

// TestMultiHostSallocSrun: salloc -N2 on the login host, srun -l hostname
// inside it: one task on each of the two allocated node hosts, their
// output streamed back to the login host with -l labels; the same from
// the controller's host (its local socket, no token).
func TestMultiHostSallocSrun(t *testing.T) {
	t.Parallel()
	b := NewBed(t, "")
	for _, on := range []string{"login", "ctl"} {
		t0 := time.Now()
		var r Result
		if on == "login" {
			r = b.Login(60*time.Second, "salloc -N2 srun -l hostname")
		} else {
			r = b.Host(on).Run(60*time.Second, nil, "cd /tmp && salloc -N2 srun -l hostname")
		}
		t.Logf("salloc -N2 srun -l hostname on %s (%.1f s): exit %d\nstdout:\n%sstderr:\n%s", on, time.Since(t0).Seconds(),
			r.Code, r.Out, r.Err)
		got := strings.Join(sortedLines(r.Out), "\n")
		if r.Code != 0 || got != "0: n1\n1: n2" {
			t.Errorf("on %s: exit %d, output %q; want exit 0 and 0: n1, 1: n2", on, r.Code, got)
		}
		m := regexp.MustCompile(`Granted job allocation (\d+)`).FindStringSubmatch(r.Err)
		if m == nil {
			t.Fatalf("on %s: no allocation granted", on)
		}
		acct := b.Login(10*time.Second, "sacct -j "+m[1]+" -o JobID,JobName,NodeList,State,ExitCode")
		t.Logf("sacct -j %s:\n%s", m[1], acct.Out)
		if st := b.waitState(m[1], 20*time.Second, "COMPLETED", "FAILED", "CANCELLED"); st != "COMPLETED" {
			t.Errorf("allocation %s ended %s, want COMPLETED", m[1], st)
		}
	}
}

func sortedLines(s string) []string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	sort.Strings(lines)
	return lines
}

// TestMultiHostSallocHolds: the allocation lasts as long as salloc's
// command, however long, and a step started late still runs in it.
func TestMultiHostSallocHolds(t *testing.T) {
	t.Parallel()
	b := NewBed(t, "")
	r := b.Login(60*time.Second, "salloc -N2 sh -c 'sleep 3; srun -l hostname; squeue -h -j $SLURM_JOB_ID -o %T'")
	t.Logf("salloc -N2 sh -c 'sleep 3; srun -l hostname; squeue ...' on login: exit %d\nstdout:\n%sstderr:\n%s", r.Code, r.Out, r.Err)
	if got := strings.Join(sortedLines(r.Out), "\n"); r.Code != 0 || got != "0: n1\n1: n2\nRUNNING" {
		t.Errorf("exit %d, output %q; want exit 0, 0: n1, 1: n2 and the allocation RUNNING", r.Code, got)
	}
}

// TestMultiHostSallocKilled: salloc killed with SIGKILL on the login host
// (no chance to release anything) loses its allocation within 60 s.
func TestMultiHostSallocKilled(t *testing.T) {
	t.Parallel()
	b := NewBed(t, "")
	r := b.Login(10*time.Second, "salloc -N1 sleep 300 >/tmp/salloc.out 2>&1 & echo $!")
	pid := strings.TrimSpace(r.Out)
	var id string
	b.waitFor(20*time.Second, "salloc's allocation", func() bool {
		out := b.Login(5*time.Second, "cat /tmp/salloc.out").Out
		m := regexp.MustCompile(`Granted job allocation (\d+)`).FindStringSubmatch(out)
		if m != nil {
			id = m[1]
		}
		return m != nil
	})
	b.waitState(id, 10*time.Second, "RUNNING")
	if k := b.Login(5*time.Second, "kill -9 "+pid); k.Code != 0 {
		t.Fatalf("kill -9 salloc (pid %s): %s", pid, k.Err)
	}
	t0 := time.Now()
	st := b.waitState(id, 60*time.Second, "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL")
	acct := b.Login(10*time.Second, "sacct -j "+id+" -o JobID,JobName,NodeList,State,ExitCode")
	t.Logf("salloc (pid %s) killed with SIGKILL; allocation %s ended %s after %.1f s\n%s", pid, id, st,
		time.Since(t0).Seconds(), acct.Out)
}

// TestMultiHostNodeFail: a node host cut off from the network (its link
// down) is set DOWN after SlurmdTimeout; its requeueable batch job is
// requeued (the run recorded NODE_FAIL) and its --no-requeue job ends
// NODE_FAIL.
func TestMultiHostNodeFail(t *testing.T) {
	t.Parallel()
	// A requeued job may start again 2 s later (Slurm's default: 121 s).
	b := NewBed(t, "SchedulerParameters=requeue_delay=2\n")
	requeued := jobID(t, b.Login(10*time.Second, "sbatch -w n2 -n1 -o /tmp/a.out --wrap 'sleep 300'"))
	ended := jobID(t, b.Login(10*time.Second, "sbatch -w n2 -n1 --no-requeue -o /tmp/b.out --wrap 'sleep 300'"))
	b.waitState(requeued, 20*time.Second, "RUNNING")
	b.waitState(ended, 20*time.Second, "RUNNING")
	b.LinkDown("n2")
	t0 := time.Now()
	st := b.waitState(ended, 30*time.Second, "NODE_FAIL", "COMPLETED", "FAILED", "CANCELLED")
	t.Logf("n2's link down: job %s (--no-requeue) ended %s after %.1f s", ended, st, time.Since(t0).Seconds())
	if st != "NODE_FAIL" {
		t.Errorf("job %s ended %s, want NODE_FAIL", ended, st)
	}
	st = b.waitState(requeued, 10*time.Second, "PENDING", "COMPLETED", "FAILED", "CANCELLED", "NODE_FAIL")
	if st != "PENDING" {
		t.Errorf("job %s is %s, want PENDING (requeued)", requeued, st)
	}
	show := b.Login(10*time.Second, "squeue -j "+requeued+" -o '%i %T %r'; scontrol show job "+requeued+
		" | grep -o 'Restarts=[0-9]*'; sacct -D -j "+requeued+","+ended+" -X -o JobID,NodeList,State; sinfo -N -o '%N %t %E'")
	t.Logf("after n2's link went down:\n%s%s", show.Out, show.Err)
	for _, want := range []string{"Restarts=1", requeued + " PENDING", "n2 down"} {
		if !strings.Contains(show.Out, want) {
			t.Errorf("no %q in:\n%s", want, show.Out)
		}
	}
	if !regexp.MustCompile(`(?m)^\s*` + requeued + `\s+n2\s+NODE_FAIL`).MatchString(show.Out) {
		t.Errorf("sacct -D does not show job %s's first run on n2 ending NODE_FAIL:\n%s", requeued, show.Out)
	}

	// The link comes back: the agent registers again (ReturnToService=1),
	// the jobs it still ran from before are killed (their runs ended) and
	// the requeued job runs again there.
	b.LinkUp("n2")
	t0 = time.Now()
	if st := b.waitState(requeued, 40*time.Second, "RUNNING"); st != "RUNNING" {
		t.Fatalf("job %s is %s after n2 came back", requeued, st)
	}
	var sleeps int
	b.waitFor(20*time.Second, "one sleep 300 left on n2", func() bool {
		sleeps = len(b.sleepers("n2"))
		return sleeps == 1
	})
	back := b.Login(10*time.Second, "squeue -o '%i %T %N'; sinfo -N -o '%N %t'")
	t.Logf("n2's link up again: job %s RUNNING after %.1f s, %d sleep 300 on n2\n%s", requeued, time.Since(t0).Seconds(),
		sleeps, back.Out)
}

// TestMultiHostSrunLogin: srun outside an allocation on the login host
// (it obtains one, runs step 0, releases it): tasks on the node hosts,
// stdin forwarded to them, output labelled, the highest exit code
// returned.
func TestMultiHostSrunLogin(t *testing.T) {
	t.Parallel()
	b := NewBed(t, "")
	cases := []struct {
		cmd, want string
		code      int
	}{
		{"srun -N3 -l hostname", "0: n1\n1: n2\n2: n3", 0},
		{"echo hello | srun -N2 -l sh -c 'read a; echo $a from $(hostname)'", "0: hello from n1\n1: hello from n2", 0},
		{"srun -N2 -l sh -c 'echo $SLURMD_NODENAME; exit $SLURM_NODEID'", "0: n1\n1: n2", 1},
	}
	for _, tc := range cases {
		r := b.Login(60*time.Second, tc.cmd)
		t.Logf("%s on login: exit %d\nstdout:\n%sstderr:\n%s", tc.cmd, r.Code, r.Out, r.Err)
		if got := strings.Join(sortedLines(r.Out), "\n"); r.Code != tc.code || got != tc.want {
			t.Errorf("%s: exit %d, output %q; want exit %d, output %q", tc.cmd, r.Code, got, tc.code, tc.want)
		}
	}
}

// TestMultiHostControllerRestart: the controller on ctl killed with
// SIGKILL and started again finds the jobs still running on the node
// hosts (the agents register again over the network): a short job ends
// COMPLETED, and a long one is cancelled from the login host, its
// processes on the node host gone.
func TestMultiHostControllerRestart(t *testing.T) {
	t.Parallel()
	b := NewBed(t, "")
	long := jobID(t, b.Login(10*time.Second, "sbatch -N2 -o /tmp/long.out --wrap 'srun sleep 300'"))
	short := jobID(t, b.Login(10*time.Second, "sbatch -w n3 -o /tmp/short.out --wrap 'sleep 5; echo done on $(hostname)'"))
	b.waitState(long, 20*time.Second, "RUNNING")
	b.waitState(short, 20*time.Second, "RUNNING")
	// The step's tasks run (srun's launch is over) before the controller
	// goes: an srun that loses the controller in mid-launch fails.
	b.waitFor(20*time.Second, "job "+long+"'s step on n1 and n2", func() bool {
		return len(b.sleepers("n1", "n2")) == 2
	})
	b.KillDaemon("ctld")
	b.Host("ctl").Daemon("ctld-2", bin, "ctld", "--conf", b.conf)
	st := b.waitState(short, 40*time.Second, "COMPLETED", "FAILED", "CANCELLED", "NODE_FAIL")
	out := b.Host("n3").Run(5*time.Second, nil, "cat /tmp/short.out")
	t.Logf("controller killed and restarted: job %s ended %s, its output on n3: %s", short, st, out.Out)
	if st != "COMPLETED" || strings.TrimSpace(out.Out) != "done on n3" {
		t.Errorf("job %s ended %s with output %q, want COMPLETED, done on n3", short, st, out.Out)
	}
	if st := b.jobState(long); st != "RUNNING" {
		t.Fatalf("job %s is %s after the restart, want RUNNING", long, st)
	}
	if r := b.Login(10*time.Second, "scancel "+long); r.Code != 0 {
		t.Fatalf("scancel %s: %s", long, r.Err)
	}
	st = b.waitState(long, 20*time.Second, "CANCELLED", "COMPLETED", "FAILED")
	b.waitFor(20*time.Second, "the cancelled job's processes gone from n1 and n2", func() bool {
		return len(b.sleepers("n1", "n2")) == 0
	})
	acct := b.Login(10*time.Second, "sacct -j "+long+","+short+" -o JobID,NodeList,State,ExitCode")
	t.Logf("scancel %s from login: %s\n%s", long, st, acct.Out)
	if !strings.HasPrefix(st, "CANCELLED") {
		t.Errorf("job %s ended %s, want CANCELLED", long, st)
	}
}

// sleepers names, once per process, the hosts running "sleep 300".
func (b *Bed) sleepers(hosts ...string) []string {
	var on []string
	for _, n := range hosts {
		for _, c := range b.Host(n).Processes() {
			if c == "sleep 300" {
				on = append(on, n)
			}
		}
	}
	return on
}

// TestMultiHostSrunPty: srun --pty from the login host (under script(1),
// which gives it a terminal) runs its command on the allocation's first
// node, as Slurm's does. Sluice's srun --pty still runs the command on the
// submit host (docs/differences.md, issue 15 item 2): that known gap skips.
func TestMultiHostSrunPty(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("script(1) is not installed (bsdutils)")
	}
	b := NewBed(t, "")
	r := b.Login(30*time.Second, "script -qec 'srun --pty -N2 hostname' /dev/null </dev/null")
	t.Logf("srun --pty -N2 hostname on login: exit %d\n%s%s", r.Code, r.Out, r.Err)
	// The terminal may echo a NUL (as "^@") that script(1) sends at the
	// end of its input: only the lines' text counts.
	lines := strings.Split(strings.NewReplacer("\r", "", "\x00", "", "^@", "").Replace(strings.TrimSpace(r.Out)), "\n")
	host := ""
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "srun:") {
			host = l
		}
	}
	if r.Code == 0 && host == "login" {
		t.Skip("known gap: srun --pty runs its command on the submit host (login), not on the first allocated node")
	}
	if r.Code != 0 || host != "n1" {
		t.Errorf("srun --pty -N2 hostname: exit %d, ran on %q; want exit 0 on n1", r.Code, host)
	}
}

// TestMultiHostUser: a user's batch job from the login host (identified
// there by a token, not by the controller's socket) runs as that user on
// every node host, and the user's own srun inside it too.
func TestMultiHostUser(t *testing.T) {
	t.Parallel()
	if _, err := user.Lookup("alice"); err != nil {
		t.Skip("no user alice on this machine (test/oracle's setup creates her)")
	}
	b := NewBed(t, "")
	id := jobID(t, b.LoginAs("alice", 10*time.Second, "sbatch -N2 --wrap 'id -un; srun -l id -un'"))
	st := b.waitState(id, 30*time.Second, "COMPLETED", "FAILED", "CANCELLED")
	out := b.Host("n1").Run(5*time.Second, nil, "cat /tmp/slurm-"+id+".out; stat -c %U /tmp/slurm-"+id+".out")
	q := b.Login(10*time.Second, "sacct -j "+id+" -o JobID,User,NodeList,State")
	t.Logf("alice's job %s ended %s; /tmp/slurm-%s.out on n1:\n%s%s\n%s", id, st, id, out.Out, out.Err, q.Out)
	if st != "COMPLETED" || strings.Join(sortedLines(out.Out), "\n") != "0: alice\n1: alice\nalice\nalice" {
		t.Errorf("job %s ended %s with output (and file owner) %q; want COMPLETED, alice everywhere", id, st, out.Out)
	}
}
