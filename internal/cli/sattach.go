package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/sluice-hpc/sluice/internal/api"
)

func init() {
	Register(Command{Name: "sattach", Summary: "attach to a running job step's output", Link: true, Run: runSattach})
}

const sattachUsage = "Usage: sattach [options] <jobid.stepid>\n"

const sattachHelp = `Usage: sattach [options] <jobid.stepid>
      --output-filter=taskid  only print stdout from the specified task
      --error-filter=taskid   only print stderr from the specified task
      --input-filter=taskid   accepted; stdin is not forwarded
  -l, --label                 prepend task number to lines of stdout & stderr
  -Q, --quiet                 quiet mode (suppress informational messages)
  -h, --help                  show this help message
      --usage                 display brief usage message
`

// sattachOpts are sattach's options.
type sattachOpts struct {
	job, step   int
	label       bool
	quiet       bool
	outFilter   int // -1: every task
	errFilter   int
	help, usage bool
}

// parseSattach reads sattach's options and its JOBID.STEPID.
func parseSattach(args []string) (*sattachOpts, error) {
	o := &sattachOpts{outFilter: -1, errFilter: -1}
	var id string
	filter := func(v string, dst *int) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("Invalid task id %q", v)
		}
		*dst = n
		return nil
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(a, "=")
		if !hasVal && i+1 < len(args) && (a == "--output-filter" || a == "--error-filter" || a == "--input-filter") {
			val, hasVal = args[i+1], true
			i++
		}
		var err error
		switch {
		case a == "-l" || a == "--label":
			o.label = true
		case a == "-Q" || a == "--quiet":
			o.quiet = true
		case a == "-h" || a == "--help":
			o.help = true
		case a == "-u" || a == "--usage":
			o.usage = true
		case a == "-v" || a == "--verbose":
		case name == "--output-filter" && hasVal:
			err = filter(val, &o.outFilter)
		case name == "--error-filter" && hasVal:
			err = filter(val, &o.errFilter)
		case name == "--input-filter" && hasVal:
			var ignored int
			err = filter(val, &ignored)
		case strings.HasPrefix(a, "-"):
			return nil, fmt.Errorf("unrecognized option '%s'", a)
		default:
			id = a
		}
		if err != nil {
			return nil, err
		}
	}
	if o.help || o.usage {
		return o, nil
	}
	j, s, ok := strings.Cut(id, ".")
	job, err1 := strconv.Atoi(j)
	step, err2 := strconv.Atoi(s)
	if !ok || err1 != nil || err2 != nil || job <= 0 || step < 0 {
		return nil, errSattachStepID
	}
	o.job, o.step = job, step
	return o, nil
}

var errSattachStepID = errors.New("Failed to parse stepid from command line options")

// runSattach attaches to a step: the controller names its nodes, each
// node's agent replays the output it kept and streams the rest until the
// step ends there, as sattach does with slurmstepd.
func runSattach(ctx context.Context, env *Env, args []string) int {
	o, err := parseSattach(args)
	switch {
	case errors.Is(err, errSattachStepID):
		Errorf(env, "sattach", "%v", err)
		fmt.Fprint(env.Stderr, sattachUsage)
		return 1
	case err != nil:
		return Errorf(env, "sattach", "%v", err)
	case o.help:
		fmt.Fprint(env.Stdout, sattachHelp)
		return 0
	case o.usage:
		fmt.Fprint(env.Stdout, sattachUsage)
		return 0
	}
	cl, err := controllerClient(env)
	if err != nil {
		return clientError(env, "sattach", err)
	}
	res, err := cl.StepAttach(ctx, api.StepAttachRequest{JobID: uint32(o.job), StepID: o.step})
	if err != nil {
		var ae *api.Error
		if errors.As(err, &ae) {
			return Errorf(env, "sattach", "Could not get job step info: %s", ae.Message)
		}
		return clientError(env, "sattach", err)
	}
	if !res.Running {
		for i := len(res.Nodes) - 1; i >= 0; i-- {
			fmt.Fprintf(env.Stderr, "sattach: Node %s: no tasks running\n", res.Nodes[i].Node)
		}
		return 0
	}
	out := &sattachOut{o: o, env: env, partial: map[srunStream][]byte{}}
	var wg sync.WaitGroup
	for _, n := range res.Nodes {
		rw, err := api.DialStepAttach(n, res.JobID, res.StepID, srunConnectTimeout)
		if err != nil {
			if !o.quiet {
				fmt.Fprintf(env.Stderr, "sattach: Node %s: no tasks running\n", n.Node)
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer rw.Close()
			out.read(rw)
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	out.flush()
	return 0
}

// sattachOut writes the step's output as srun does: whole lines per task,
// "TASK: " first under -l, filtered by task.
type sattachOut struct {
	o       *sattachOpts
	env     *Env
	mu      sync.Mutex
	partial map[srunStream][]byte
}

func (s *sattachOut) read(r io.Reader) {
	for {
		kind, task, p, err := api.ReadStepFrame(r)
		if err != nil || kind == api.StepFrameDone {
			return
		}
		switch kind {
		case api.StepFrameStdout, api.StepFrameStderr:
			s.output(int(int32(task)), kind == api.StepFrameStderr, p)
		case api.StepFrameExit:
			var e api.StepTaskExit
			if json.Unmarshal(p, &e) == nil {
				s.mu.Lock()
				s.flushTask(e.Task)
				s.mu.Unlock()
			}
		}
	}
}

func (s *sattachOut) output(task int, stderr bool, p []byte) {
	filter := s.o.outFilter
	if stderr {
		filter = s.o.errFilter
	}
	if filter >= 0 && task != filter {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	buf := append(s.partial[srunStream{task, stderr}], p...)
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			break
		}
		s.line(task, stderr, buf[:i+1])
		buf = buf[i+1:]
	}
	s.partial[srunStream{task, stderr}] = append([]byte(nil), buf...)
}

func (s *sattachOut) line(task int, stderr bool, l []byte) {
	w := s.env.Stdout
	if stderr {
		w = s.env.Stderr
	}
	if s.o.label && task >= 0 {
		fmt.Fprintf(w, "%d: ", task)
	}
	w.Write(l)
}

func (s *sattachOut) flushTask(task int) {
	for _, stderr := range []bool{false, true} {
		k := srunStream{task, stderr}
		if len(s.partial[k]) > 0 {
			s.line(task, stderr, s.partial[k])
			delete(s.partial, k)
		}
	}
}

func (s *sattachOut) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.partial {
		s.flushTask(k.task)
	}
}
