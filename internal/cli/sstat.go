package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/sluice-hpc/sluice/internal/api"
)

func init() {
	Register(Command{Name: "sstat", Summary: "live resource usage of running job steps", Link: true, Run: runSstat})
	compatNoEffect["sstat --verbose"] = "Sluice prints no debug output"
	compatNoEffect["sstat --noconvert"] = "sizes are printed in Slurm's default units"
	compatNoEffect["sstat --pidformat"] = "one line per step, its pids in the Pids field"
}

const sstatUsage = `Usage: sstat [-a] [-n] [-p | -P] [-o FIELDS] -j JOB[.STEP][,...]
  -a, --allsteps      include the batch step
  -e, --helpformat    list the fields
  -j, --jobs          JOB or JOB.STEP (batch, 0, 1, ...)
  -n, --noheader      no header
  -o, --format        fields (sstat --helpformat)
  -p, --parsable      '|' after every field;  -P, --parsable2: between fields
`

// sstatOpts are sstat's options.
type sstatOpts struct {
	all, noHeader, parsable, parsable2, helpFormat, help bool
	jobs                                                 []string
	format                                               string
}

func parseSstat(args []string) (*sstatOpts, error) {
	o := &sstatOpts{}
	fs := pflag.NewFlagSet("sstat", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVarP(&o.all, "allsteps", "a", false, "")
	fs.BoolVarP(&o.noHeader, "noheader", "n", false, "")
	fs.BoolVarP(&o.parsable, "parsable", "p", false, "")
	fs.BoolVarP(&o.parsable2, "parsable2", "P", false, "")
	fs.BoolVarP(&o.helpFormat, "helpformat", "e", false, "")
	fs.BoolVarP(&o.help, "help", "h", false, "")
	fs.BoolVar(&o.help, "usage", false, "")
	fs.StringSliceVarP(&o.jobs, "jobs", "j", nil, "")
	fs.StringVarP(&o.format, "format", "o", "", "")
	fs.StringVar(&o.format, "fields", "", "")
	// Accepted with nothing to change: no debug output, pids as is.
	fs.Bool("noconvert", false, "")
	fs.BoolP("pidformat", "i", false, "")
	fs.CountP("verbose", "v", "")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		// A bare argument is a job id, as sstat takes it.
		o.jobs = append(o.jobs, fs.Args()...)
	}
	return o, nil
}

// sstatDefaultFields is sstat's default field list (oracle header).
const sstatDefaultFields = "JobID,MaxVMSize,MaxVMSizeNode,MaxVMSizeTask,AveVMSize,MaxRSS,MaxRSSNode,MaxRSSTask,AveRSS," +
	"MaxPages,MaxPagesNode,MaxPagesTask,AvePages,MinCPU,MinCPUNode,MinCPUTask,AveCPU,NTasks,AveCPUFreq," +
	"ReqCPUFreqMin,ReqCPUFreqMax,ReqCPUFreqGov,ConsumedEnergy,MaxDiskRead,MaxDiskReadNode,MaxDiskReadTask," +
	"AveDiskRead,MaxDiskWrite,MaxDiskWriteNode,MaxDiskWriteTask,AveDiskWrite,TRESUsageInAve,TRESUsageInMax," +
	"TRESUsageInMaxNode,TRESUsageInMaxTask,TRESUsageInMin,TRESUsageInMinNode,TRESUsageInMinTask,TRESUsageInTot," +
	"TRESUsageOutAve,TRESUsageOutMax,TRESUsageOutMaxNode,TRESUsageOutMaxTask,TRESUsageOutMin,TRESUsageOutMinNode," +
	"TRESUsageOutMinTask,TRESUsageOutTot"

// sstatFields are sstat's fields in --helpformat order, with their
// widths (oracle).
var sstatFields = []sacctField{
	{"AveCPU", 10, nil}, {"AveCPUFreq", 10, nil}, {"AveDiskRead", 12, nil}, {"AveDiskWrite", 12, nil},
	{"AvePages", 10, nil}, {"AveRSS", 10, nil}, {"AveVMSize", 10, nil}, {"ConsumedEnergy", 14, nil},
	{"ConsumedEnergyRaw", 17, nil}, {"JobID", -12, nil}, {"MaxDiskRead", 12, nil}, {"MaxDiskReadNode", 15, nil},
	{"MaxDiskReadTask", 15, nil}, {"MaxDiskWrite", 12, nil}, {"MaxDiskWriteNode", 16, nil}, {"MaxDiskWriteTask", 16, nil},
	{"MaxPages", 8, nil}, {"MaxPagesNode", 12, nil}, {"MaxPagesTask", 14, nil}, {"MaxRSS", 10, nil},
	{"MaxRSSNode", 10, nil}, {"MaxRSSTask", 10, nil}, {"MaxVMSize", 10, nil}, {"MaxVMSizeNode", 14, nil},
	{"MaxVMSizeTask", 14, nil}, {"MinCPU", 10, nil}, {"MinCPUNode", 10, nil}, {"MinCPUTask", 10, nil},
	{"Nodelist", 20, nil}, {"NTasks", 8, nil}, {"Pids", 20, nil}, {"ReqCPUFreq", 10, nil},
	{"ReqCPUFreqMin", 13, nil}, {"ReqCPUFreqMax", 13, nil}, {"ReqCPUFreqGov", 13, nil}, {"TRESUsageInAve", 14, nil},
	{"TRESUsageInMax", 14, nil}, {"TRESUsageInMaxNode", 18, nil}, {"TRESUsageInMaxTask", 18, nil}, {"TRESUsageInMin", 14, nil},
	{"TRESUsageInMinNode", 18, nil}, {"TRESUsageInMinTask", 18, nil}, {"TRESUsageInTot", 14, nil}, {"TRESUsageOutAve", 15, nil},
	{"TRESUsageOutMax", 15, nil}, {"TRESUsageOutMaxNode", 19, nil}, {"TRESUsageOutMaxTask", 19, nil}, {"TRESUsageOutMin", 15, nil},
	{"TRESUsageOutMinNode", 19, nil}, {"TRESUsageOutMinTask", 19, nil}, {"TRESUsageOutTot", 15, nil},
}

func sstatHelpFormat() string {
	var b strings.Builder
	for i, f := range sstatFields {
		if i%4 == 3 || i == len(sstatFields)-1 {
			fmt.Fprintf(&b, "%-19s\n", f.name)
		} else {
			fmt.Fprintf(&b, "%-20s", f.name)
		}
	}
	return b.String()
}

// sstatValue is one field of a running step's usage line.
func sstatValue(name string, st *api.StepStat) string {
	u := &st.Usage
	switch lower := strings.ToLower(name); {
	case lower == "jobid":
		return fmt.Sprintf("%d.%s", st.JobID, st.Step)
	case lower == "nodelist":
		return st.NodeList
	case lower == "ntasks":
		return strconv.Itoa(st.NTasks)
	case lower == "pids":
		var pids []int
		for _, t := range u.Tasks {
			pids = append(pids, t.Pids...)
		}
		// Newest first, as sstat lists them (oracle: "6240,6239" for a
		// script and its child).
		slices.Sort(pids)
		slices.Reverse(pids)
		s := make([]string, len(pids))
		for i, p := range pids {
			s[i] = strconv.Itoa(p)
		}
		return strings.Join(s, ",")
	case strings.HasPrefix(lower, "reqcpufreq"), lower == "avecpufreq", strings.HasPrefix(lower, "consumedenergy"):
		return "0"
	case strings.HasPrefix(lower, "tresusage"):
		return tresUsage(u, lower, true)
	}
	v, _ := u.UsageField(name, true)
	return v
}

// sstatColumns resolves -o's list (default: sstat's).
func sstatColumns(format string) ([]sacctField, error) {
	if format == "" {
		format = sstatDefaultFields
	}
	var out []sacctField
	for _, spec := range strings.Split(format, ",") {
		if strings.TrimSpace(spec) == "" {
			continue
		}
		name, width, hasWidth := strings.Cut(strings.TrimSpace(spec), "%")
		i := slices.IndexFunc(sstatFields, func(f sacctField) bool { return strings.EqualFold(f.name, name) })
		if i < 0 {
			return nil, fmt.Errorf("Invalid field requested: %q", name)
		}
		f := sstatFields[i]
		if hasWidth {
			w, err := strconv.Atoi(width)
			if err != nil || w == 0 {
				return nil, fmt.Errorf("Invalid field requested: %q", spec)
			}
			f.width = w
		}
		out = append(out, f)
	}
	return out, nil
}

// sstatJob splits JOB[.STEP].
func sstatJob(s string) (uint32, string, bool) {
	id, step, _ := strings.Cut(s, ".")
	n, err := strconv.ParseUint(id, 10, 32)
	if err != nil || n == 0 {
		return 0, "", false
	}
	if step != "" && step != "batch" && step != "extern" {
		if _, err := strconv.Atoi(step); err != nil {
			return 0, "", false
		}
	}
	return uint32(n), step, true
}

func runSstat(ctx context.Context, env *Env, args []string) int {
	o, err := parseSstat(args)
	if err != nil {
		return OptionError(env, "sstat", err)
	}
	switch {
	case o.help:
		fmt.Fprint(env.Stdout, sstatUsage)
		return 0
	case o.helpFormat:
		fmt.Fprint(env.Stdout, sstatHelpFormat())
		return 0
	case len(o.jobs) == 0:
		return Errorf(env, "sstat", "You didn't give me any jobs to stat.")
	}
	cols, err := sstatColumns(o.format)
	if err != nil {
		return Errorf(env, "sstat", "%v", err)
	}
	type target struct {
		id   uint32
		step string
	}
	var targets []target
	for _, j := range o.jobs {
		id, step, ok := sstatJob(j)
		if !ok {
			fmt.Fprintf(env.Stderr, "sstat: fatal: Bad job/step specified: %s\n", j)
			return 1
		}
		targets = append(targets, target{id, step})
	}
	cl, err := controllerClient(env)
	if err != nil {
		return clientError(env, "sstat", err)
	}
	lo := &sacctOpts{parsable: o.parsable, parsable2: o.parsable2, delimiter: "|"}
	var b strings.Builder
	if !o.noHeader {
		sacctLine(&b, cols, lo, func(f sacctField) string { return f.name })
		if !o.parsable && !o.parsable2 {
			sacctLine(&b, cols, lo, func(f sacctField) string { return strings.Repeat("-", sacctAbs(f.width)) })
		}
	}
	var errs []string
	for _, t := range targets {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		res, err := cl.Sstat(cctx, api.SstatRequest{JobID: t.id, Step: t.step, All: o.all})
		cancel()
		var ae *api.Error
		switch {
		case errors.As(err, &ae) && (ae.Status == http.StatusNotFound || ae.Status == http.StatusConflict):
			// Slurm prints these and still exits 0 (oracle).
			errs = append(errs, ae.Message)
			continue
		case err != nil:
			fmt.Fprint(env.Stdout, b.String())
			return clientError(env, "sstat", err)
		}
		for i := range res.Steps {
			st := &res.Steps[i]
			sacctLine(&b, cols, lo, func(f sacctField) string { return sstatValue(f.name, st) })
		}
	}
	fmt.Fprint(env.Stdout, b.String())
	for _, e := range errs {
		fmt.Fprintf(env.Stderr, "sstat: error: %s\n", e)
	}
	return 0
}
