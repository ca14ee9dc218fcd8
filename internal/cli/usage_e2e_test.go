package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The usage and enforcement tests run a real cluster as root with a
// cgroup.conf that confines memory and cores, and a workload (testdata/
// usagehog) that holds a known amount of memory, burns a known CPU time
// and lasts a known wall time.

// usageHog builds testdata/usagehog once per test.
func usageHog(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "usagehog")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/usagehog").CombinedOutput(); err != nil {
		t.Fatalf("go build usagehog: %v\n%s", err, out)
	}
	os.Chmod(filepath.Dir(bin), 0o755)
	return bin
}

// confinedCluster starts a one-node cluster (two CPUs) that samples usage
// every second and confines jobs as cgroup.conf says.
func confinedCluster(t *testing.T) *extCluster {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: node agents confine jobs with cgroups only as root")
	}
	sluiceBinary(t)
	return upClusterFiles(t, 1, "JobAcctGatherFrequency=1\n", map[string]string{
		"cgroup.conf": "CgroupPlugin=autodetect\nConstrainCores=yes\nConstrainRAMSpace=yes\n",
	})
}

// sacctFields runs sacct -P -n for one job with fields, and returns the
// line of jobID (JOBID, JOBID.batch, ...) split on '|'.
func (c *extCluster) sacctLine(job, line, fields string) []string {
	c.t.Helper()
	rc, out, errs := c.run("sacct", "-P", "-n", "-j", job, "-o", "JobID,"+fields)
	if rc != 0 {
		c.t.Fatalf("sacct: %d %s", rc, errs)
	}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Split(l, "|"); f[0] == line {
			return f[1:]
		}
	}
	c.t.Fatalf("sacct -j %s has no line %s:\n%s", job, line, out)
	return nil
}

// parseMem reads sacct's MaxRSS ("204800K", "200M") in bytes.
func parseMem(t *testing.T, s string) float64 {
	t.Helper()
	units := map[byte]float64{'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30}
	if s == "" {
		t.Fatal("empty memory figure")
	}
	u, ok := units[s[len(s)-1]]
	num := s
	if ok {
		num = s[:len(s)-1]
	} else {
		u = 1
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		t.Fatalf("memory figure %q: %v", s, err)
	}
	return v * u
}

// parseCPU reads sacct's TotalCPU ("00:02.034", "01:02:03") and Elapsed.
func parseCPU(t *testing.T, s string) time.Duration {
	t.Helper()
	var d time.Duration
	for _, p := range strings.Split(s, ":") {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil {
			t.Fatalf("time figure %q: %v", s, err)
		}
		d = d*60 + time.Duration(v*float64(time.Second))
	}
	return d
}

func within(got, want, frac float64) bool { return got >= want*(1-frac) && got <= want*(1+frac) }

// TestE2EUsageMatchesReality runs a job that holds 200 MB, burns 2 s of
// CPU and lasts 10 s, and checks that sacct's MaxRSS, TotalCPU and
// Elapsed are within 10% of that (issue 15's acceptance).
func TestE2EUsageMatchesReality(t *testing.T) {
	t.Parallel()
	c := confinedCluster(t)
	hog := usageHog(t)
	id := c.submit("--mem=1G", "--wrap", hog+" -mb 200 -cpu 2s -wall 10s")
	c.waitState(id, "COMPLETED")
	rc, out, _ := c.run("sacct", "-j", id, "-o", "JobID,MaxRSS,TotalCPU,Elapsed")
	t.Logf("sacct -j %s -o JobID,MaxRSS,TotalCPU,Elapsed (rc %d):\n%s", id, rc, out)
	f := c.sacctLine(id, id+".batch", "MaxRSS,TotalCPU,Elapsed")
	if rss := parseMem(t, f[0]); !within(rss, 200<<20, 0.10) {
		t.Errorf("MaxRSS %s, want 200M within 10%%", f[0])
	}
	if cpu := parseCPU(t, f[1]); !within(cpu.Seconds(), 2, 0.10) {
		t.Errorf("TotalCPU %s, want 2 s within 10%%", f[1])
	}
	if el := parseCPU(t, f[2]); !within(el.Seconds(), 10, 0.10) {
		t.Errorf("Elapsed %s, want 10 s within 10%%", f[2])
	}
	// The job's line: CPU times only (oracle: MaxRSS empty there).
	if j := c.sacctLine(id, id, "MaxRSS,TotalCPU"); j[0] != "" || j[1] != f[1] {
		t.Errorf("job line MaxRSS %q TotalCPU %q, want empty and the batch step's %s", j[0], j[1], f[1])
	}
}

// TestE2EOutOfMemory checks that a job using more than its --mem ends
// OUT_OF_MEMORY with ExitCode 0:125, as Slurm's with ConstrainRAMSpace.
func TestE2EOutOfMemory(t *testing.T) {
	t.Parallel()
	c := confinedCluster(t)
	hog := usageHog(t)
	id := c.submit("--mem=64M", "--wrap", hog+" -mb 300 -cpu 10ms")
	c.waitState(id, "OUT_OF_MEMORY")
	for _, line := range []string{id, id + ".batch"} {
		if f := c.sacctLine(id, line, "State,ExitCode"); f[0] != "OUT_OF_MEMORY" || f[1] != "0:125" {
			t.Errorf("%s: %v, want OUT_OF_MEMORY 0:125", line, f)
		}
	}
}

// TestE2ECoresConfined checks ConstrainCores: the tasks of a job see only
// its allocated CPUs (nproc, taskset), in the batch script and in srun's
// steps.
func TestE2ECoresConfined(t *testing.T) {
	t.Parallel()
	if runtime.NumCPU() < 2 {
		t.Skip("needs two CPUs")
	}
	c := confinedCluster(t)
	for _, n := range []int{1, 2} {
		id := c.submit("-c", strconv.Itoa(n), "-o", filepath.Join(c.state, "cores-%j.out"),
			"--wrap", "nproc; taskset -cp $$ | sed 's/.*: //'; SLURM_CONF="+c.conf+" "+c.bin+" srun nproc")
		st := c.waitState(id, "COMPLETED", "FAILED")
		data, _ := os.ReadFile(filepath.Join(c.state, "cores-"+id+".out"))
		if st.State != "COMPLETED" {
			t.Fatalf("%d-core job %s %s:\n%s", n, st.State, st.ExitCode, data)
		}
		lines := strings.Fields(string(data))
		want := []string{strconv.Itoa(n), cpuRange(n), strconv.Itoa(n)}
		if fmt.Sprint(lines) != fmt.Sprint(want) {
			t.Errorf("%d-core job saw %q, want nproc, affinity and srun nproc %v", n, data, want)
		}
	}
}

// cpuRange is taskset -c's list of the first n CPUs ("0", "0,1").
func cpuRange(n int) string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = strconv.Itoa(i)
	}
	return strings.Join(ids, ",")
}
