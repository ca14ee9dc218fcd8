package noded

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"sync"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/pmi"
)

// A step run with --mpi=pmi2 gives each task a PMI connection (package
// pmi); this node's fences go to srun over the step's I/O connection and
// srun's answer, every node's pairs, comes back the same way.

// stepPMI is a step's PMI state on this node.
type stepPMI struct {
	srv *pmi.Server
	mu  sync.Mutex
	// answers are the fences waiting for srun's answer, by sequence.
	answers map[int]chan map[string]string
}

// pmiFD is the task's descriptor of its PMI connection (its first extra
// file after stdin, stdout and stderr).
const pmiFD = 3

// startPMI creates the step's PMI server when the step asks for one.
func (r *stepRun) startPMI() {
	if r.req.MPI != api.MPIPMI2 {
		return
	}
	p := &stepPMI{answers: map[int]chan map[string]string{}}
	p.srv = pmi.NewServer(pmi.Config{JobID: fmt.Sprintf("%d.%d", r.key.job, r.key.step), Size: r.req.NTasks,
		Ranks: r.req.Tasks, Mapping: pmi.Mapping(r.req.TaskCounts), Exchange: r.pmiExchange(p),
		Abort: func(rank, code int, msg string) {
			r.out.frame(api.StepFrameStderr, uint32(rank), []byte(fmt.Sprintf("slurmstepd: error: task %d aborted MPI (code %d) %s\n", rank, code, msg)))
			r.terminate(api.StateFailed, "-", "PMI abort")
		}})
	r.mu.Lock()
	r.pmi = p
	r.mu.Unlock()
}

// pmiExchange sends the node's part of a fence to srun and waits for the
// whole.
func (r *stepRun) pmiExchange(p *stepPMI) pmi.Exchange {
	return func(ctx context.Context, seq int, local map[string]string) (map[string]string, error) {
		ch := make(chan map[string]string, 1)
		p.mu.Lock()
		p.answers[seq] = ch
		p.mu.Unlock()
		body, err := json.Marshal(api.StepPMIFence{Seq: seq, Pairs: local})
		if err != nil {
			return nil, err
		}
		r.out.frame(api.StepFramePMIFence, 0, body)
		select {
		case all := <-ch:
			return all, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-r.done:
			return nil, fmt.Errorf("step ended")
		}
	}
}

// pmiAnswer delivers srun's answer to a fence.
func (r *stepRun) pmiAnswer(payload []byte) {
	r.mu.Lock()
	p := r.pmi
	r.mu.Unlock()
	var f api.StepPMIFence
	if p == nil || json.Unmarshal(payload, &f) != nil {
		return
	}
	p.mu.Lock()
	ch := p.answers[f.Seq]
	delete(p.answers, f.Seq)
	p.mu.Unlock()
	if ch != nil {
		ch <- f.Pairs
	}
}

// attachPMI gives task t its PMI connection and variables.
func (r *stepRun) attachPMI(t *stepTask, cmd *exec.Cmd, files *taskFiles) error {
	r.mu.Lock()
	p := r.pmi
	r.mu.Unlock()
	if p == nil {
		return nil
	}
	f, err := p.srv.Attach(t.id)
	if err != nil {
		return err
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, f)
	files.child = append(files.child, f)
	cmd.Env = append(cmd.Env, p.srv.Env(t.id, pmiFD+len(cmd.ExtraFiles)-1)...)
	cmd.Env = append(cmd.Env, "SLURM_MPI_TYPE="+api.MPIPMI2)
	return nil
}

// stopPMI ends the step's PMI server.
func (r *stepRun) stopPMI() {
	r.mu.Lock()
	p := r.pmi
	r.mu.Unlock()
	if p != nil {
		p.srv.Close()
	}
}
