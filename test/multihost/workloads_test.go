package multihost

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// mpiHello is an MPI hello world with an MPI_Allreduce: every rank adds
// rank+1, so with six ranks each prints the sum 21 and its host.
const mpiHello = `#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int rank, size, one, sum = 0;
    char host[64];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    one = rank + 1;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    gethostname(host, sizeof host);
    printf("rank %d of %d sum %d on %s\n", rank, size, sum, host);
    MPI_Finalize();
    return 0;
}
`

// buildHello compiles mpiHello with compiler into the bed's shared
// directory (the program, like a user's home on NFS, is the one thing the
// hosts share; /tmp and the spools are each host's own).
func buildHello(t *testing.T, b *Bed, compiler, name string) string {
	cc, err := exec.LookPath(compiler)
	if err != nil {
		if os.Getenv("SLUICE_REQUIRE_MPI") != "" {
			t.Fatalf("%s not found and SLUICE_REQUIRE_MPI is set", compiler)
		}
		t.Skipf("%s not found: install Debian's mpich/openmpi-bin and their -dev packages to run the MPI tests on the bed", compiler)
	}
	dir := filepath.Join(b.dir, "shared", "mpi")
	must(t, os.MkdirAll(dir, 0o755))
	src := filepath.Join(dir, name+".c")
	must(t, os.WriteFile(src, []byte(mpiHello), 0o644))
	bin := filepath.Join(dir, name)
	if out, err := exec.Command(cc, "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", compiler, err, out)
	}
	return bin
}

// checkRanks requires six ranks of size 6 summing 21, two on each node.
func checkRanks(t *testing.T, what, out string) {
	t.Helper()
	perHost := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		m := regexp.MustCompile(`^rank (\d) of 6 sum 21 on (n\d)$`).FindStringSubmatch(strings.TrimSpace(l))
		if m != nil {
			perHost[m[2]]++
		}
	}
	if perHost["n1"] != 2 || perHost["n2"] != 2 || perHost["n3"] != 2 {
		t.Errorf("%s: ranks per node %v, want 2 on each of n1-n3:\n%s", what, perHost, out)
	}
}

// TestMultiHostMPI: Debian's MPICH (its PMI-1 client) runs six ranks on
// the three node hosts as `srun --mpi=pmi2 -N3 -n6 ./hello` inside a
// salloc from the login host, the key-value exchange crossing the
// network through srun; and Open MPI's mpirun inside `sbatch -N3` starts
// its daemons on the node hosts through srun.
func TestMultiHostMPI(t *testing.T) {
	t.Parallel()
	b := NewBed(t, "")
	mpich := buildHello(t, b, "mpicc.mpich", "hello-mpich")
	r := b.Login(90*time.Second, "salloc -N3 -n6 srun --mpi=pmi2 -N3 -n6 "+mpich)
	t.Logf("salloc -N3 -n6 srun --mpi=pmi2 -N3 -n6 hello (MPICH) on login: exit %d\nstdout:\n%sstderr:\n%s", r.Code, r.Out, r.Err)
	if r.Code != 0 {
		t.Errorf("MPICH under srun: exit %d", r.Code)
	}
	checkRanks(t, "MPICH under srun --mpi=pmi2", r.Out)

	ompi := buildHello(t, b, "mpicc.openmpi", "hello-ompi")
	mpirun, err := exec.LookPath("mpirun.openmpi")
	if err != nil {
		t.Skip("mpirun.openmpi not found")
	}
	id := jobID(t, b.Login(10*time.Second, "sbatch -N3 -n6 -o /tmp/ompi.out --wrap '"+mpirun+" --allow-run-as-root -np 6 "+ompi+"'"))
	st := b.waitState(id, 90*time.Second, "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT")
	out := b.Host("n1").Run(10*time.Second, nil, "cat /tmp/ompi.out").Out
	t.Logf("sbatch -N3 -n6 mpirun -np 6 hello (Open MPI): %s; n1:/tmp/ompi.out:\n%s", st, out)
	if st != "COMPLETED" {
		t.Errorf("Open MPI job ended %s", st)
	}
	checkRanks(t, "Open MPI's mpirun in sbatch", out)
}

// TestMultiHostSstatSattach: from the login host, sstat reads a running
// step's usage from the agents of two node hosts, and sattach attaches to
// its output.
func TestMultiHostSstatSattach(t *testing.T) {
	t.Parallel()
	b := NewBed(t, "")
	id := jobID(t, b.Login(10*time.Second, "sbatch -N2 -o /tmp/s.out --wrap 'srun -N2 sh -c \"i=0; while [ \\$i -lt 40 ]; do echo tick \\$i; i=\\$((i+1)); sleep 1; done\"'"))
	b.waitState(id, 30*time.Second, "RUNNING")
	var stat Result
	b.waitFor(30*time.Second, "sstat of step 0", func() bool {
		stat = b.Login(10*time.Second, "sstat -n -P -j "+id+".0 -o JobID,NTasks,Nodelist")
		return strings.HasPrefix(stat.Out, id+".0|2|")
	})
	t.Logf("sstat -j %s.0 on login: %q %q", id, stat.Out, stat.Err)
	att := b.Login(8*time.Second, "timeout 4 sattach -l "+id+".0; true")
	t.Logf("sattach -l %s.0 on login:\n%s%s", id, att.Out, att.Err)
	if !strings.Contains(att.Out, "0: tick") || !strings.Contains(att.Out, "1: tick") {
		t.Errorf("sattach -l %s.0: no labelled output of both tasks:\n%s%s", id, att.Out, att.Err)
	}
	b.Login(10*time.Second, "scancel "+id)
}
