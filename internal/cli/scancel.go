package cli

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/sluice-hpc/sluice/internal/api"
)

func init() {
	Register(Command{Name: "scancel", Summary: "cancel or signal jobs", Link: true, Run: runScancel})
}

// scancelOpts are scancel's options; args are the job ids.
type scancelOpts struct {
	f                     api.JobFilter
	sig, states           string
	batch, full, me, help bool
	args                  []string
}

func parseScancel(args []string) (*scancelOpts, error) {
	o := &scancelOpts{}
	fs := pflag.NewFlagSet("scancel", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVarP(&o.f.User, "user", "u", "", "")
	fs.StringVarP(&o.f.Partition, "partition", "p", "", "")
	fs.StringVarP(&o.states, "state", "t", "", "")
	fs.StringVarP(&o.f.Name, "name", "n", "", "")
	fs.StringVarP(&o.f.Account, "account", "A", "", "")
	fs.StringVarP(&o.f.QOS, "qos", "q", "", "")
	fs.StringVarP(&o.f.NodeList, "nodelist", "w", "", "")
	fs.StringVarP(&o.f.Reservation, "reservation", "R", "", "")
	fs.StringVarP(&o.sig, "signal", "s", "", "")
	fs.BoolVarP(&o.batch, "batch", "b", false, "")
	fs.BoolVarP(&o.full, "full", "f", false, "")
	fs.BoolVar(&o.me, "me", false, "")
	fs.BoolVar(&o.help, "help", false, "")
	fs.BoolP("verbose", "v", false, "")
	fs.BoolP("quiet", "Q", false, "")
	fs.BoolVar(&o.help, "usage", false, "")
	// Accepted with nothing to change: there is no burst buffer to skip
	// staging out (-H), and the request always goes to the controller
	// (--ctld).
	fs.BoolP("hurry", "H", false, "")
	fs.Bool("ctld", false, "")
	err := fs.Parse(args)
	o.args = fs.Args()
	return o, err
}

func runScancel(ctx context.Context, env *Env, args []string) int {
	o, err := parseScancel(args)
	if err != nil {
		return OptionError(env, "scancel", err)
	}
	f, sig, states, batch, full := o.f, o.sig, o.states, o.batch, o.full
	if o.help {
		fmt.Fprintln(env.Stdout, "Usage: scancel [-A account] [-b] [-f] [-n name] [-p partition] [-q qos] [-s signal] [-t state] [-u user] [-w nodes] [job_id[_array_id]]...")
		return 0
	}
	if o.me {
		f.User = userName(env.UID)
	}
	for _, s := range splitComma(states) {
		s = strings.ToUpper(s)
		if long, ok := compactStates[s]; ok {
			s = long
		}
		if s != "PENDING" && s != "RUNNING" && s != "SUSPENDED" {
			// scancel's own wording, without its name (oracle)
			fmt.Fprintf(env.Stderr, "Invalid job state specified: %s\nValid job states are PENDING, RUNNING, and SUSPENDED\n", s)
			return 1
		}
		f.States = append(f.States, s)
	}
	var jobs []string
	for _, a := range o.args {
		jobs = append(jobs, splitComma(a)...)
	}
	for _, id := range jobs {
		if !scancelJobID.MatchString(id) {
			return Errorf(env, "scancel", "Invalid job id %s", id)
		}
	}
	if len(jobs) == 0 && f.User == "" && f.Partition == "" && f.Name == "" && f.Account == "" && f.QOS == "" && f.NodeList == "" &&
		f.Reservation == "" && len(f.States) == 0 {
		return Errorf(env, "scancel", "No job identification provided")
	}
	req := api.JobControlRequest{Op: api.OpCancel, Jobs: jobs, Filter: f, BatchOnly: batch, Full: full}
	if sig != "" {
		n, err := parseSignal(sig)
		if err != nil {
			return Errorf(env, "scancel", "%v", err)
		}
		req.Signal = n
		if n == int(unix.SIGKILL) && !batch && !full {
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
		if r.Error == "" || req.Signal == 0 && scancelIgnored(r.Error) {
			continue
		}
		// Slurm words a signal's failure as a kill's too (oracle:
		// scancel -s USR1 of a held job, "Kill job error on job id 7:
		// Job can not be altered now, try again later").
		Errorf(env, "scancel", "Kill job error on job id %s: %s", r.Job, r.Error)
		code = scancelExit(r.Error)
	}
	return code
}

// scancelIgnored reports the errors scancel keeps quiet about when
// cancelling (a job unknown or already ending: the goal is reached; oracle:
// `scancel 99` printed nothing and exited 0).
func scancelIgnored(msg string) bool {
	return msg == "Invalid job id specified" || msg == "Job/step already completing or completed"
}

// scancelErrnos are the Slurm error numbers behind slurmctld's refusals:
// scancel exits with the number's low byte (oracle: scancel of another
// user's job exited 210, ESLURM_ACCESS_DENIED 2002; a signal to a pending
// job 228, ESLURM_TRANSITION_STATE_NO_UPDATE 2020).
var scancelErrnos = map[string]int{
	"Access/permission denied":                    2002,
	"Job can not be altered now, try again later": 2020,
}

// scancelExit is scancel's exit status after the refusal msg.
func scancelExit(msg string) int {
	if n, ok := scancelErrnos[msg]; ok {
		return n & 0xff
	}
	return 1
}

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

// scancelJobID is the form of a job id scancel accepts: JOB, JOB_TASK or
// JOB_[RANGES], JOB+HETOFFSET, each with an optional .STEP (a number,
// batch, extern or interactive); anything else is refused before any
// request (oracle: "Invalid job id 1.5x").
var scancelJobID = regexp.MustCompile(`^[0-9]+(_([0-9]+|\[[0-9,%-]+\]))?(\+[0-9]+)?(\.([0-9]+|batch|extern|interactive))?$`)
