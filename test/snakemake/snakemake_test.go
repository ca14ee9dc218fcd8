// Package snakemake runs a real workflow manager against Sluice: Debian's
// snakemake 7 with its Slurm executor (`snakemake --slurm`), which submits
// each rule with sbatch, runs it inside the job as `srun -n1 --cpu-bind=q`,
// follows it with sacct (scontrol show job as a fallback) and guesses the
// account with sacct and sacctmgr. The workflow (Snakefile, five rules)
// must complete with no wrapper around Sluice's commands.
//
// The test needs root (the cluster's agents run jobs as the submitting
// user) and snakemake on PATH (`apt-get install -y snakemake`); it skips
// with a message otherwise, and under -short.
package snakemake

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestSnakemakeSlurmExecutor(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test (builds the binary, starts a cluster, runs snakemake)")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: the node agents run the jobs as their users")
	}
	snake, err := exec.LookPath("snakemake")
	if err != nil {
		t.Skip("snakemake is not installed (Debian: apt-get install -y snakemake); skipping the snakemake --slurm workflow test")
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "bin")
	sluice := filepath.Join(bin, "sluice")
	if out, err := exec.Command("go", "build", "-o", sluice, "../../cmd/sluice").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	if out, err := exec.Command(sluice, "install-links", bin).CombinedOutput(); err != nil {
		t.Fatalf("install-links: %v\n%s", err, out)
	}
	state := filepath.Join(dir, "state")
	conf := startCluster(t, sluice, state)

	work := filepath.Join(dir, "work")
	os.MkdirAll(work, 0o755)
	wf, err := os.ReadFile("Snakefile")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(work, "Snakefile"), wf, 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// Snakemake 7 polls sacct once every 33 s unless told a rate of at
	// most 1 check a second (anything above is replaced by 0.03); one a
	// second is what a user of a small cluster sets, and it keeps the
	// five rules from taking four minutes of polling.
	cmd := exec.CommandContext(ctx, snake, "--slurm", "-j", "4", "--max-status-checks-per-second", "1",
		"--default-resources", "slurm_partition=debug")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "SLURM_CONF="+conf, "USER=root", "HOME="+dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("snakemake --slurm: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "7 of 7 steps (100%) done") {
		t.Errorf("snakemake did not run every step:\n%s", out.String())
	}
	summary, err := os.ReadFile(filepath.Join(work, "summary.txt"))
	if err != nil {
		t.Fatalf("no summary.txt: %v\n%s", err, out.String())
	}
	// count.txt (4 lines of upper/*) then both upper files, each written
	// by a step (srun) of its own job on a node of the cluster.
	want := regexp.MustCompile(`^4\nSAMPLE A\nhost node\d step 0\nSAMPLE B\nhost node\d step 0\n$`)
	if !want.Match(summary) {
		t.Errorf("summary.txt:\n%s", summary)
	}
}

// startCluster runs `sluice up` with two 2-CPU nodes in state and waits
// until both nodes are idle; it returns the slurm.conf path.
func startCluster(t *testing.T, sluice, state string) string {
	t.Helper()
	os.MkdirAll(state, 0o711)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	conf := filepath.Join(state, "slurm.conf")
	text := fmt.Sprintf(`ClusterName=sluice
SlurmctldHost=localhost
SlurmctldPort=%d
SlurmUser=root
StateSaveLocation=%[2]s
SlurmdSpoolDir=%[2]s/spool
AccountingStorageType=accounting_storage/sqlite
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
ReturnToService=1
KillWait=5
MinJobAge=300
NodeName=node[1-2] CPUs=2 RealMemory=2000 State=UNKNOWN
PartitionName=debug Nodes=node[1-2] Default=YES MaxTime=INFINITE State=UP
`, port, state)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	up := exec.Command(sluice, "up", "--state", state, "--conf", conf)
	up.Stdout, up.Stderr = &log, &log
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		up.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { up.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			up.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("sluice up log:\n%s", log.String())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		c := exec.Command(sluice, "sinfo", "-h", "-o", "%T %D")
		c.Env = append(os.Environ(), "SLURM_CONF="+conf)
		if o, err := c.Output(); err == nil && strings.TrimSpace(string(o)) == "idle 2" {
			return conf
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("cluster did not come up on %s:\n%s", runtime.GOOS, log.String())
	return ""
}
