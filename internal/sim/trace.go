package sim

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/sluice-hpc/sluice/internal/api"
)

// RunToLimit is the Job.Runtime of a job that runs until its time limit
// (the UB events format's "-sim-walltime -1").
const RunToLimit int64 = -1

// Job is one job of a trace, whatever its format: when it was submitted,
// how long it really ran, and what it asked for (the same api.JobSpec sbatch
// sends, so every option the core understands can come through). In JSON the
// spec's fields are inlined next to the trace fields (see
// docs/trace-format.md). The spec is never nil in a trace and jobs may
// share it (the SWF reader and Transform do): it is read-only, and a job
// whose request differs gets a copy of its own.
type Job struct {
	// ID is the job's number in the trace (SWF job number, sacct JobID,
	// sequence number for UB events). Unique within a trace.
	ID int64 `json:"id"`
	// Submit is the submit time in seconds from the trace's start.
	Submit int64 `json:"submit"`
	// Runtime is how long the job ran in seconds; the simulator caps it at
	// the time limit (the job then ends in TIMEOUT). RunToLimit = until the
	// time limit.
	Runtime int64 `json:"runtime"`
	// Status is the recorded final state (COMPLETED, FAILED, CANCELLED,
	// TIMEOUT, ...), informative only.
	Status string `json:"status,omitempty"`
	// RecordedWait is the wait the production scheduler gave the job
	// (seconds; -1 unknown), kept to compare with the simulated schedule.
	RecordedWait int64 `json:"recorded_wait,omitempty"`
	// GPUs is the total GPU count the job uses (derived from the spec's
	// --gres/--gpus when read from a trace; informative for metrics).
	GPUs int64 `json:"-"`
	// Line is the job's line in the trace file (0: not read from a file),
	// for messages that point at it.
	Line int `json:"-"`
	*api.JobSpec
}

// BadLine is a trace line that could not be used, with why.
type BadLine struct {
	Line int    `json:"line"`
	Err  string `json:"error"`
}

// Trace is a parsed workload trace.
type Trace struct {
	// Format is the reader that produced it: swf, sacct, ub, jsonl.
	Format string `json:"format"`
	// Jobs are the usable jobs sorted by submit time then ID.
	Jobs []Job `json:"-"`
	// StartUnix is the Unix time of the trace's time 0 (SWF UnixStartTime,
	// the first submit for sacct); 0 when the trace does not say.
	StartUnix int64 `json:"start_unix"`
	// MaxNodes and MaxProcs are the machine size an SWF header declares.
	MaxNodes int `json:"max_nodes,omitempty"`
	MaxProcs int `json:"max_procs,omitempty"`
	// TimeZone is the SWF TimeZoneString.
	TimeZone string `json:"time_zone,omitempty"`
	// Queues maps SWF queue numbers to their names.
	Queues map[int]string `json:"queues,omitempty"`
	// Bad are the lines that could not be parsed, with line numbers.
	Bad []BadLine `json:"bad_lines,omitempty"`
	// Skipped counts usable records left out, by cause ("never ran",
	// "no processors", ...).
	Skipped map[string]int `json:"skipped,omitempty"`
	// Records is the number of job records read (usable or not).
	Records int `json:"records"`

	// chunks collect jobs while reading when Jobs was not sized from the
	// line count (a reader that is not a file), instead of growing Jobs.
	chunks [][]Job
}

// traceChunk is the number of jobs per chunk while reading.
const traceChunk = 4096

// sizedReader is a trace held in memory with its line count, an upper
// bound on its jobs: the readers size Trace.Jobs once from it, so the
// records are written in place instead of being collected and copied.
// (When each record held its spec, one copy of 50 MB of pointer-rich
// records was a single non-preemptible typed copy: under a concurrent GC
// it ran with write barriers on while the collector spun waiting to
// preempt it, 1.2 s of CPU on SDSC-SP2. Reading the whole text first is
// still faster than parsing as it inflates, measured: the parse then
// runs beside more collections, each preempting it by a signal.)
type sizedReader struct {
	*bytes.Reader
	lines int
}

// newTrace returns an empty trace of format, with Jobs sized for r's lines
// when r is a sizedReader.
func newTrace(format string, r io.Reader) *Trace {
	t := &Trace{Format: format}
	if s, ok := r.(*sizedReader); ok {
		t.Jobs = make([]Job, 0, s.lines)
	}
	return t
}

// add appends a usable job.
func (t *Trace) add(j *Job) {
	if len(t.chunks) == 0 && len(t.Jobs) < cap(t.Jobs) {
		t.Jobs = append(t.Jobs, *j)
		return
	}
	n := len(t.chunks)
	if n == 0 || len(t.chunks[n-1]) == traceChunk {
		t.chunks = append(t.chunks, make([]Job, 0, traceChunk))
		n++
	}
	t.chunks[n-1] = append(t.chunks[n-1], *j)
}

// ErrNoJobs is returned when a trace holds no usable job.
var ErrNoJobs = errors.New("trace has no usable job")

func (t *Trace) skip(cause string) {
	if t.Skipped == nil {
		t.Skipped = map[string]int{}
	}
	t.Skipped[cause]++
}

func (t *Trace) bad(line int, format string, a ...any) {
	t.Bad = append(t.Bad, BadLine{Line: line, Err: fmt.Sprintf(format, a...)})
}

// finish sorts the jobs and reports a trace without usable jobs as an error
// that names the first bad lines, so a wrong --trace-format is obvious.
func (t *Trace) finish() (*Trace, error) {
	t.flatten()
	less := func(i, j int) bool {
		if t.Jobs[i].Submit != t.Jobs[j].Submit {
			return t.Jobs[i].Submit < t.Jobs[j].Submit
		}
		return t.Jobs[i].ID < t.Jobs[j].ID
	}
	// Traces are usually in submit order already: checked before
	// sorting.
	if !sort.SliceIsSorted(t.Jobs, less) {
		sort.SliceStable(t.Jobs, less)
	}
	if len(t.Jobs) == 0 {
		msg := fmt.Sprintf("%s: %d records", ErrNoJobs, t.Records)
		if len(t.Bad) > 0 {
			msg += fmt.Sprintf(", %d bad lines (first: line %d: %s)", len(t.Bad), t.Bad[0].Line, t.Bad[0].Err)
		}
		return t, fmt.Errorf("%w%s", ErrNoJobs, strings.TrimPrefix(msg, ErrNoJobs.Error()))
	}
	return t, nil
}

// flatten moves the collected chunks into Jobs with one allocation. It
// copies record by record: one bulk copy of the chunks cannot be
// preempted, which stalls a concurrent GC (see sizedReader).
func (t *Trace) flatten() {
	if len(t.chunks) == 0 {
		return
	}
	total := len(t.Jobs)
	for _, c := range t.chunks {
		total += len(c)
	}
	jobs := make([]Job, len(t.Jobs), total)
	copy(jobs, t.Jobs)
	for _, c := range t.chunks {
		for i := range c {
			jobs = append(jobs, c[i])
		}
	}
	t.Jobs, t.chunks = jobs, nil
}

// BadSummary renders the bad lines for a warning: the count and the first
// few line numbers with their errors.
func (t *Trace) BadSummary(max int) string {
	if len(t.Bad) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d bad lines", len(t.Bad))
	for i, bl := range t.Bad {
		if i == max {
			fmt.Fprintf(&b, "; ...")
			break
		}
		fmt.Fprintf(&b, "; line %d: %s", bl.Line, bl.Err)
	}
	return b.String()
}

// ReadOptions tune the trace readers.
type ReadOptions struct {
	// Format is swf, sacct, ub or jsonl; "" guesses from the file name and
	// its first line.
	Format string
	// SbatchParser parses sbatch options for the UB events format (the CLI
	// passes cli.ParseSbatchOptions; sim cannot import cli).
	SbatchParser SbatchParser
	// UserMap maps SWF user ids to names and accounts (see ReadUserMap);
	// nil = generated user<N> in account group<N>.
	UserMap map[int]UserEntry
}

// SbatchParser parses sbatch options into a job spec and returns the
// positional arguments left (the script name).
type SbatchParser func(args []string) (api.JobSpec, []string, error)

// ReadFile reads a trace file, gunzipping it when its name ends in .gz.
func ReadFile(path string, opt ReadOptions) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	size := textSize(f)
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("read trace %s: %w", path, err)
		}
		defer gz.Close()
		r = gz
	}
	// Held in memory (a trace's text is a fraction of its parsed
	// records) so the line count can size Trace.Jobs; the buffer is sized
	// from the text's size, since growing it by doubling zeroed and
	// faulted in twice the memory (0.1 s on SDSC-SP2).
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead+1))
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, fmt.Errorf("read trace %s: %w", path, err)
	}
	data := buf.Bytes()
	if opt.Format == "" {
		opt.Format = GuessFormat(strings.TrimSuffix(path, ".gz"), data[:min(len(data), 4096)])
	}
	t, err := Read(&sizedReader{bytes.NewReader(data), bytes.Count(data, []byte{'\n'}) + 1}, opt)
	if err != nil {
		return t, fmt.Errorf("read trace %s: %w", path, err)
	}
	return t, nil
}

// textSize is the size of f's text, a hint: for a gzip file the size
// its trailer records (ISIZE, the uncompressed size of the last member
// modulo 4 GiB), else the file's size. f is left at its start.
func textSize(f *os.File) int {
	st, err := f.Stat()
	if err != nil || st.Size() <= 0 {
		return 0
	}
	n := st.Size()
	if strings.HasSuffix(f.Name(), ".gz") && n >= 18 {
		var tail [4]byte
		if _, err := f.ReadAt(tail[:], n-4); err == nil {
			n = int64(binary.LittleEndian.Uint32(tail[:]))
		}
	}
	return int(min(n, 1<<30))
}

// GuessFormat picks a reader from a file name and its first bytes.
func GuessFormat(name string, head []byte) string {
	switch {
	case strings.HasSuffix(name, ".swf"):
		return "swf"
	case strings.HasSuffix(name, ".jsonl"), strings.HasSuffix(name, ".ndjson"):
		return "jsonl"
	case strings.HasSuffix(name, ".events"):
		return "ub"
	}
	first := bytes.TrimSpace(head)
	switch {
	case bytes.HasPrefix(first, []byte("{")):
		return "jsonl"
	case bytes.HasPrefix(first, []byte("-dt")):
		return "ub"
	case bytes.Contains(firstLine(first), []byte("|")):
		return "sacct"
	}
	return "swf"
}

func firstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i]
	}
	return b
}

// Read parses a trace in the given format.
func Read(r io.Reader, opt ReadOptions) (*Trace, error) {
	switch opt.Format {
	case "swf":
		return ReadSWF(r, opt.UserMap)
	case "sacct":
		return ReadSacct(r)
	case "ub":
		return ReadUBEvents(r, opt.SbatchParser)
	case "jsonl":
		return ReadJSONL(r)
	}
	return nil, fmt.Errorf("unknown trace format %q (want swf, sacct, ub or jsonl)", opt.Format)
}

// lines calls fn for each line of r with its 1-based number, with lines up
// to 1 MB long.
func lines(r io.Reader, fn func(n int, line string)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		fn(n, sc.Text())
	}
	return sc.Err()
}
