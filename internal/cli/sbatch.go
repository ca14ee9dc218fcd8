package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sluice-hpc/sluice/internal/api"
)

func init() {
	Register(Command{Name: "sbatch", Summary: "submit a batch script", Link: true, Run: runSbatch})
}

const sbatchUsage = `Usage: sbatch [OPTIONS(0)...] [ : [OPTIONS(N)...]] script(0) [args(0)...]

Submits a batch script (or --wrap "command") to the controller; #SBATCH
lines in the script are read with the same options, the command line wins.
Common options: -J NAME -p PART -A ACCOUNT -q QOS -t TIME -N NODES -n TASKS
-c CPUS --mem SIZE --mem-per-cpu SIZE --gres LIST -G GPUS --gpus-per-node N
-a/--array SPEC -d/--dependency LIST --nice[=N] --begin TIME -H/--hold
--exclusive --requeue --no-requeue -o FILE -e FILE -D DIR --export LIST
--wrap CMD --parsable --test-only -W/--wait --uid/--gid (root only).
`

func runSbatch(ctx context.Context, env *Env, args []string) int {
	req, err := ParseSbatchEnv(args, env.lookupEnv(), func(name string) (string, error) { return loadScript(env, name) })
	if err != nil {
		return OptionError(env, "sbatch", err)
	}
	switch {
	case req.Help || req.Usage:
		fmt.Fprint(env.Stdout, sbatchUsage)
		return 0
	case req.Version:
		fmt.Fprintln(env.Stdout, VersionLine())
		return 0
	}
	if rc := dosLineBreaks(env, req.Spec.Script); rc != 0 {
		return rc
	}
	if gpusBelowNodes(&req.Spec) {
		return gpusBelowNodesError(env, "sbatch")
	}
	if env.UID != 0 && (req.Spec.UID != nil || req.Spec.User != "") {
		return Errorf(env, "sbatch", "--uid only permitted by root user")
	}
	if env.UID != 0 && (req.Spec.GID != nil || req.Spec.Group != "") {
		return Errorf(env, "sbatch", "--gid only permitted by root user")
	}
	fillSubmitContext(env, &req.Spec)
	cl, err := submitClient(env)
	if err != nil {
		return submitFailed(env, err)
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := submitRetrying(ctx, env, cl, api.SubmitRequest{Spec: req.Spec, TestOnly: req.TestOnly})
	var ae *api.Error
	if err != nil && req.TestOnly && errors.As(err, &ae) && !ae.Plain {
		fmt.Fprintf(env.Stderr, "allocation failure: %s\n", ae.Message) // sbatch --test-only's own wording
		return 1
	}
	if err != nil {
		return submitFailed(env, err)
	}
	if req.TestOnly {
		fmt.Fprintf(env.Stderr, "sbatch: Job %d to start at %s using %d processors on nodes %s in partition %s\n",
			res.JobID, slurmTime(res.TestStart), res.TestProcs, res.TestNodes, res.TestPartition)
		return 0
	}
	switch {
	case req.Parsable:
		fmt.Fprintf(env.Stdout, "%d\n", res.JobID)
	case !req.Quiet:
		fmt.Fprintf(env.Stdout, "Submitted batch job %d\n", res.JobID)
	}
	if req.Wait {
		return waitJob(parent, env, cl, res.JobID)
	}
	return 0
}

// submitClient is controllerClient for a command that lives for one
// submission: when slurm.conf names the state directory plainly (no
// Include, no token in SLURM_JWT) and the socket is there, the file is
// scanned for StateSaveLocation instead of being parsed and checked whole,
// and the client makes its call on one connection of its own. Anything
// else takes controllerClient's path, with its errors.
func submitClient(env *Env) (*api.Client, error) {
	if s := env.Getenv("SLUICE_SOCKET"); s != "" {
		return api.NewUnixOneShotClient(s), nil
	}
	if env.Getenv("SLURM_JWT") == "" {
		if dir, ok := scanStateSaveLocation(confPath(env)); ok {
			sock := filepath.Join(dir, api.SocketFile)
			if st, err := os.Stat(sock); err == nil && st.Mode()&os.ModeSocket != 0 {
				return api.NewUnixOneShotClient(sock), nil
			}
		}
	}
	return controllerClient(env)
}

// scanStateSaveLocation finds StateSaveLocation in a slurm.conf without
// parsing the rest: keys are case-insensitive, a line holds
// whitespace-separated key=value pairs, '#' starts a comment, the last
// setting wins. ok is false (the caller parses the file properly) when
// the file cannot be read, has an Include line, quotes or escapes the
// value, or does not set the key.
func scanStateSaveLocation(path string) (dir string, ok bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if i := bytes.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		fields := bytes.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if bytes.EqualFold(fields[0], []byte("include")) || bytes.IndexByte(line, '\\') >= 0 {
			return "", false
		}
		for _, f := range fields {
			k, v, found := bytes.Cut(f, []byte("="))
			if !found || !bytes.EqualFold(k, []byte("StateSaveLocation")) {
				continue
			}
			if len(v) == 0 || bytes.ContainsAny(v, "\"'") {
				return "", false
			}
			dir = string(v)
		}
	}
	return dir, dir != ""
}

// submitFailed prints Slurm's submission failure: the reason name on a
// line of its own for limit rejections, then the message; exit 1.
func submitFailed(env *Env, err error) int {
	var ae *api.Error
	if errors.As(err, &ae) {
		if ae.Plain {
			return Errorf(env, "sbatch", "%s", ae.Message)
		}
		if ae.Reason != "" {
			Errorf(env, "sbatch", "%s", ae.Reason)
		}
		return Errorf(env, "sbatch", "Batch job submission failed: %s", ae.Message)
	}
	if errors.Is(err, api.ErrNoAnswer) {
		return Errorf(env, "sbatch", "Batch job submission failed: %v: %s", api.ErrNoAnswer, noAnswerHint)
	}
	if errors.Is(err, api.ErrUnreachable) || errors.Is(err, errNoController) {
		return Errorf(env, "sbatch", "Batch job submission failed: %v", errNoController)
	}
	return Errorf(env, "sbatch", "Batch job submission failed: %v", err)
}

// gpusBelowNodes is the job spec check sbatch, salloc and srun make before
// submitting: a --gpus total smaller than the -N minimum node count.
func gpusBelowNodes(s *api.JobSpec) bool {
	if s.GPUs == "" || s.MinNodes == 0 {
		return false
	}
	v := s.GPUs
	if i := strings.LastIndexByte(v, ':'); i >= 0 {
		v = v[i+1:]
	}
	n, err := strconv.Atoi(v)
	return err == nil && n > 0 && n < s.MinNodes
}

// gpusBelowNodesError prints the client's two lines for gpusBelowNodes.
func gpusBelowNodesError(env *Env, me string) int {
	Errorf(env, me, "Failed to validate job spec, --gpus < -N")
	return Errorf(env, me, "Invalid generic resource (gres) specification")
}

// loadScript reads the batch script ("" = standard input).
func loadScript(env *Env, name string) (string, error) {
	if name == "" {
		if env.IsTerminal {
			return "", fmt.Errorf("script is not specified and stdin is a terminal")
		}
		data, err := io.ReadAll(env.Stdin)
		if err != nil {
			return "", err
		}
		return string(data), scriptEmpty(data)
	}
	if !filepath.IsAbs(name) && env.Cwd != "" {
		name = filepath.Join(env.Cwd, name)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return "", fmt.Errorf("Unable to open file %s", name)
	}
	return string(data), scriptEmpty(data)
}

// scriptEmpty refuses a script with nothing to run, in Slurm's words
// (oracle: `sbatch </dev/null` prints "Batch script is empty!").
func scriptEmpty(data []byte) error {
	switch {
	case len(data) == 0:
		return errors.New("Batch script is empty!")
	case len(bytes.TrimSpace(data)) == 0:
		return errors.New("Batch script contains only whitespace!")
	}
	return nil
}

// fillSubmitContext adds what sbatch sends besides the options: the
// working directory and the submission environment.
func fillSubmitContext(env *Env, s *api.JobSpec) {
	if s.WorkDir == "" {
		s.WorkDir = env.Cwd
	} else if !filepath.IsAbs(s.WorkDir) && env.Cwd != "" {
		s.WorkDir = filepath.Join(env.Cwd, s.WorkDir)
	}
	if s.AllocNode == "" {
		s.AllocNode = shortHostname()
		s.AllocSID, _ = unix.Getsid(0)
	}
	if s.Environment == nil {
		for _, kv := range os.Environ() {
			// Tokens are not stored with the job: a job started from
			// inside a job gets a token of its own at launch.
			if !strings.HasPrefix(kv, "SLURM_JWT=") && !strings.HasPrefix(kv, api.JobTokenEnv+"=") &&
				!strings.HasPrefix(kv, "SLURM_PRIO_PROCESS=") {
				s.Environment = append(s.Environment, kv)
			}
		}
		s.Environment = append(s.Environment, "SLURM_PRIO_PROCESS="+strconv.Itoa(prioProcess()))
	}
}

// prioProcess is sbatch's nice value, which Slurm's sbatch exports to the
// job as SLURM_PRIO_PROCESS (0 for an ordinary shell).
func prioProcess() int {
	raw, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	if err != nil {
		return 0
	}
	return 20 - raw // the kernel's value is 20 - nice
}

// waitJob is sbatch --wait: poll until the job ends, exit with its code.
func waitJob(ctx context.Context, env *Env, cl *api.Client, id uint32) int {
	for {
		res, err := cl.Jobs(context.Background(), api.JobQuery{IDs: []string{strconv.FormatUint(uint64(id), 10)}})
		if err == nil && len(res.Jobs) > 0 {
			j := res.Jobs[0]
			switch j.State {
			case "PENDING", "RUNNING", "SUSPENDED", "COMPLETING", "CONFIGURING":
			default:
				code, _, _ := strings.Cut(j.ExitCode, ":")
				n, _ := strconv.Atoi(code)
				if j.State != "COMPLETED" && n == 0 {
					n = 1
				}
				return n
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
			continue
		}
		return 1
	}
}

// slurmTime prints a time as Slurm's clients do.
func slurmTime(t time.Time) string {
	if t.IsZero() {
		return "Unknown"
	}
	return t.Local().Format("2006-01-02T15:04:05")
}

// noAnswerHint follows "(receive failure)" when sbatch gives up: the
// request reached the controller, whose answer was lost.
const noAnswerHint = "the request was sent but no answer came back; the job may have been stored, check with squeue"

// submitRetries are the pauses before sbatch sends a submission again
// after a lost answer (a controller killed or restarting after the
// request reached it).
var submitRetries = []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}

// submitRetrying submits req, sending it again after a lost answer
// with the same SubmitKey: the controller answers a repeated
// key with the job it already made, so a retry after a lost answer
// never makes a second job. Answers of the controller (refusals) are
// not retried.
func submitRetrying(ctx context.Context, env *Env, cl *api.Client, req api.SubmitRequest) (api.SubmitResponse, error) {
	if req.Spec.SubmitKey == "" && !req.TestOnly {
		req.Spec.SubmitKey = newSubmitKey()
	}
	for i := 0; ; i++ {
		res, err := cl.Submit(ctx, req)
		if err == nil || i >= len(submitRetries) || req.TestOnly || !errors.Is(err, api.ErrNoAnswer) {
			return res, err
		}
		fmt.Fprintf(env.Stderr, "sbatch: error: %v; retrying\n", firstLine(err))
		select {
		case <-ctx.Done():
			return res, err
		case <-time.After(submitRetries[i]):
		}
	}
}

func newSubmitKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// firstLine is the first line of err's text.
func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
