package noded

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestTaskCPUs: srun --cpu-bind as task/affinity binds a task: cores and
// threads give each local task its -c share of the step's CPUs, map_cpu
// the CPU its local id picks, mask_cpu the mask's CPUs, sockets the whole
// set; none and quiet bind nothing; a CPU outside the step's set is an
// error (the task then runs unbound).
func TestTaskCPUs(t *testing.T) {
	avail := []int{2, 3, 4, 5}
	cases := []struct {
		bind         *api.CPUBind
		local, cpt   int
		ntasks       int
		want, errSub string
	}{
		{&api.CPUBind{Types: []string{"cores"}}, 1, 2, 2, "[4 5]", ""},
		{&api.CPUBind{Types: []string{"threads"}}, 3, 1, 4, "[5]", ""},
		{&api.CPUBind{Types: []string{"cores"}}, 0, 4, 2, "[2 3]", ""},
		{&api.CPUBind{Types: []string{"map_cpu:"}, List: "5,3"}, 1, 1, 2, "[3]", ""},
		{&api.CPUBind{Types: []string{"map_cpu:"}, List: "5,3"}, 2, 1, 3, "[5]", ""},
		{&api.CPUBind{Types: []string{"mask_cpu:"}, List: "c"}, 0, 1, 1, "[2 3]", ""},
		{&api.CPUBind{Types: []string{"sockets"}}, 0, 1, 1, "[2 3 4 5]", ""},
		{&api.CPUBind{Types: []string{"none"}}, 0, 1, 1, "[]", ""},
		{&api.CPUBind{Verbose: true}, 0, 1, 1, "[]", ""},
		{&api.CPUBind{Types: []string{"map_cpu:"}, List: "0"}, 0, 1, 1, "[]", "not one of the step's CPUs 2,3,4,5"},
	}
	for _, c := range cases {
		got, err := taskCPUs(c.bind, avail, c.local, c.cpt, c.ntasks)
		if fmt.Sprint(got) != c.want || (c.errSub == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.errSub)) {
			t.Errorf("%+v task %d: %v %v, want %s %q", *c.bind, c.local, got, err, c.want, c.errSub)
		}
	}
	if m := cpuMaskHex([]int{0, 1, 8}); m != "0x103" {
		t.Errorf("mask %s", m)
	}
}

// TestForkExecRetry: a script whose writer still holds it open (ETXTBSY)
// starts once the descriptor is closed, instead of failing the job.
func TestForkExecRetry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.sh")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("#!/bin/sh\nexit 0\n")
	go func() {
		time.Sleep(50 * time.Millisecond)
		f.Close()
	}()
	pid, err := forkExecRetry(path, []string{path}, &syscall.ProcAttr{})
	if err != nil {
		t.Fatalf("forkExecRetry: %v", err)
	}
	var ws syscall.WaitStatus
	syscall.Wait4(pid, &ws, 0, nil)
	if ws.ExitStatus() != 0 {
		t.Errorf("exit %d", ws.ExitStatus())
	}
}
