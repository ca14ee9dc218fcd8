package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// mpiHello is an MPI hello world with an MPI_Allreduce: every rank adds
// rank+1, so with n ranks each prints the sum n(n+1)/2.
const mpiHello = `#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int rank, size, one, sum = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    one = rank + 1;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("rank %d of %d sum %d\n", rank, size, sum);
    MPI_Finalize();
    return 0;
}
`

// TestMPIHelloPMI2: Debian's MPICH (its simple PMI-1 client) runs six
// ranks over three nodes as `srun --mpi=pmi2 -N3 -n6 ./hello` inside a
// batch job: every rank sees size 6 and the Allreduce sums over all of
// them, the key-value exchange going through srun (no shared state but
// the program). Needs mpicc (Debian's mpich, libmpich-dev): skipped
// without it unless SLUICE_REQUIRE_MPI is set (the suite installs it).
func TestMPIHelloPMI2(t *testing.T) {
	t.Parallel()
	mpicc, err := exec.LookPath("mpicc.mpich") // MPICH even where Open MPI owns "mpicc"
	if err != nil {
		mpicc, err = exec.LookPath("mpicc")
	}
	if err != nil {
		if os.Getenv("SLUICE_REQUIRE_MPI") != "" {
			t.Fatal("mpicc not found and SLUICE_REQUIRE_MPI is set (apt-get install mpich libmpich-dev)")
		}
		t.Skip("mpicc not found: install Debian's mpich and libmpich-dev to run the MPI test")
	}
	c := upCluster(t, 3, "")
	dir := filepath.Join(c.state, "mpi")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "hello.c")
	if err := os.WriteFile(src, []byte(mpiHello), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(mpicc, "-o", filepath.Join(dir, "hello"), src).CombinedOutput(); err != nil {
		t.Fatalf("mpicc: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "out.txt")
	rc, stdout, stderr := c.run("sbatch", "-N3", "-n6", "-o", out, "--export=ALL,SLURM_CONF="+c.conf, "--wrap", c.bin+" srun --mpi=pmi2 -N3 -n6 "+filepath.Join(dir, "hello"))
	if rc != 0 {
		t.Fatalf("sbatch: %d %s %s", rc, stdout, stderr)
	}
	id := strings.TrimSpace(strings.TrimPrefix(stdout, "Submitted batch job "))
	if j := c.waitState(id, "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"); j.State != "COMPLETED" {
		data, _ := os.ReadFile(out)
		t.Fatalf("job %s ended %s:\n%s", id, j.State, data)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		seen[line] = true
	}
	for r := 0; r < 6; r++ {
		want := "rank " + string(rune('0'+r)) + " of 6 sum 21"
		if !seen[want] {
			t.Errorf("no line %q in:\n%s", want, data)
		}
	}
	if len(seen) != 6 {
		t.Errorf("%d distinct lines, want 6:\n%s", len(seen), data)
	}
}

// TestOpenMPIMpirunInBatch: Open MPI's mpirun inside `sbatch -N3 -n6`
// starts its daemons on the job's nodes through srun (its plm/slurm runs
// `srun --ntasks-per-node=1 --kill-on-bad-exit --mpi=none ... orted`) and
// runs six ranks whose Allreduce sums over all of them. Needs Debian's
// openmpi-bin and libopenmpi-dev: skipped without them unless
// SLUICE_REQUIRE_MPI is set.
func TestOpenMPIMpirunInBatch(t *testing.T) {
	mpicc, err1 := exec.LookPath("mpicc.openmpi")
	mpirun, err2 := exec.LookPath("mpirun.openmpi")
	if err1 != nil || err2 != nil {
		if os.Getenv("SLUICE_REQUIRE_MPI") != "" {
			t.Fatal("Open MPI not found and SLUICE_REQUIRE_MPI is set (apt-get install openmpi-bin libopenmpi-dev)")
		}
		t.Skip("Open MPI not found: install Debian's openmpi-bin and libopenmpi-dev to run the Open MPI test")
	}
	c := upCluster(t, 3, "")
	dir := filepath.Join(c.state, "ompi")
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	// mpirun finds srun on PATH, as on a Slurm cluster.
	if err := os.Symlink(c.bin, filepath.Join(dir, "bin", "srun")); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "hello.c")
	if err := os.WriteFile(src, []byte(mpiHello), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(mpicc, "-o", filepath.Join(dir, "hello"), src).CombinedOutput(); err != nil {
		t.Fatalf("mpicc: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "out.txt")
	// The three nodes of `sluice up` are one host: same host name, one
	// /dev/shm, where the ranks of different "nodes" would collide in Open
	// MPI's shared-memory transport. The multi-host bed runs it with
	// separate hosts and the default transports (test/multihost).
	script := "export PATH=" + filepath.Join(dir, "bin") + ":$PATH; " + mpirun + " --allow-run-as-root --mca btl self,tcp -np 6 " + filepath.Join(dir, "hello")
	rc, stdout, stderr := c.run("sbatch", "-N3", "-n6", "-o", out, "--export=ALL,SLURM_CONF="+c.conf, "--wrap", script)
	if rc != 0 {
		t.Fatalf("sbatch: %d %s %s", rc, stdout, stderr)
	}
	id := strings.TrimSpace(strings.TrimPrefix(stdout, "Submitted batch job "))
	j := c.waitState(id, "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT")
	data, _ := os.ReadFile(out)
	if j.State != "COMPLETED" {
		t.Fatalf("job %s ended %s:\n%s", id, j.State, data)
	}
	for r := 0; r < 6; r++ {
		if want := "rank " + string(rune('0'+r)) + " of 6 sum 21"; !strings.Contains(string(data), want) {
			t.Errorf("no line %q in:\n%s", want, data)
		}
	}
}
