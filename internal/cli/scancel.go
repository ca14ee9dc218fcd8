package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/sluice-hpc/sluice/internal/api"
)

func init() {
	Register(Command{Name: "scancel", Summary: "cancel or signal jobs", Link: true, Run: runScancel})
}

func runScancel(ctx context.Context, env *Env, args []string) int {
	fs := pflag.NewFlagSet("scancel", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f api.JobFilter
	var sig, states string
	var batch, me, help bool
	fs.StringVarP(&f.User, "user", "u", "", "")
	fs.StringVarP(&f.Partition, "partition", "p", "", "")
	fs.StringVarP(&states, "state", "t", "", "")
	fs.StringVarP(&f.Name, "name", "n", "", "")
	fs.StringVarP(&f.Account, "account", "A", "", "")
	fs.StringVarP(&f.QOS, "qos", "q", "", "")
	fs.StringVarP(&f.NodeList, "nodelist", "w", "", "")
	fs.StringVarP(&sig, "signal", "s", "", "")
	fs.BoolVarP(&batch, "batch", "b", false, "")
	fs.BoolVar(&me, "me", false, "")
	fs.BoolVar(&help, "help", false, "")
	fs.BoolP("verbose", "v", false, "")
	fs.BoolP("quiet", "Q", false, "")
	if err := fs.Parse(args); err != nil {
		return OptionError(env, "scancel", err)
	}
	if help {
		fmt.Fprintln(env.Stdout, "Usage: scancel [-A account] [-b] [-n name] [-p partition] [-q qos] [-s signal] [-t state] [-u user] [-w nodes] [job_id[_array_id]]...")
		return 0
	}
	if me {
		f.User = userName(env.UID)
	}
	for _, s := range splitComma(states) {
		s = strings.ToUpper(s)
		if long, ok := compactStates[s]; ok {
			s = long
		}
		if s != "PENDING" && s != "RUNNING" && s != "SUSPENDED" {
			return Errorf(env, "scancel", "Invalid job state specified: %s", s)
		}
		f.States = append(f.States, s)
	}
	var jobs []string
	for _, a := range fs.Args() {
		jobs = append(jobs, splitComma(a)...)
	}
	if len(jobs) == 0 && f.User == "" && f.Partition == "" && f.Name == "" && f.Account == "" && f.QOS == "" && f.NodeList == "" && len(f.States) == 0 {
		return Errorf(env, "scancel", "No job identification provided")
	}
	req := api.JobControlRequest{Op: api.OpCancel, Jobs: jobs, Filter: f, BatchOnly: batch}
	if sig != "" {
		n, err := parseSignal(sig)
		if err != nil {
			return Errorf(env, "scancel", "%v", err)
		}
		req.Signal = n
		if n == int(unix.SIGKILL) && !batch {
			req.Signal = 0 // scancel -s KILL ends the job, like plain scancel
		}
	}
	cl, err := controllerClient(env)
	if err != nil {
		return clientError(env, "scancel", err)
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := cl.Control(ctx, req)
	if err != nil {
		return clientError(env, "scancel", err)
	}
	code := 0
	for _, r := range res.Results {
		if r.Error == invalidJobID {
			// Slurm 24.11's scancel is silent, exit 0, for a job or array
			// task that does not exist (oracle: scancel 99, scancel 8_[5-6]
			// where 8 is a task's own id).
			continue
		}
		if r.Error != "" {
			what := "Kill job error"
			if req.Signal != 0 {
				what = "Signal job error"
			}
			Errorf(env, "scancel", "%s on job id %s: %s", what, r.Job, r.Error)
			code = 1
		}
	}
	return code
}

// invalidJobID is the controller's answer for an unknown job id.
const invalidJobID = "Invalid job id specified"

// parseSignal reads a signal name or number: KILL, SIGKILL, 9, USR1.
func parseSignal(s string) (int, error) {
	if n, err := strconv.Atoi(s); err == nil && n > 0 && n < 65 {
		return n, nil
	}
	name := strings.ToUpper(s)
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	if n := unix.SignalNum(name); n != 0 {
		return int(n), nil
	}
	return 0, fmt.Errorf("Invalid signal: %s", s)
}
