package noded

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/hostlist"
)

// CommandRunner runs a program and returns its standard output; tests
// replace it to feed recorded nvidia-smi output.
type CommandRunner func(ctx context.Context, name string, args ...string) ([]byte, error)

// ExecRunner is the CommandRunner that runs real programs.
func ExecRunner(ctx context.Context, name string, args ...string) ([]byte, error) {
	return exec.CommandContext(ctx, name, args...).Output()
}

// GPUDiscovery finds a node's GPUs the way slurmd's AutoDetect does, from
// the most to the least informative source: a static gres.conf-style list
// when one is configured, else nvidia-smi when it is installed, else the
// /dev/nvidiaN device files.
type GPUDiscovery struct {
	// Static, when not empty, is gres.conf text (Name=gpu [Type=T]
	// File=/dev/nvidia[0-3] | Count=N lines) that replaces detection.
	Static string
	// Node filters Static lines that carry NodeName=.
	Node string
	// Run runs nvidia-smi (nil = ExecRunner).
	Run CommandRunner
	// LookPath finds nvidia-smi (nil = exec.LookPath).
	LookPath func(string) (string, error)
	// Root is the filesystem root used for /dev (default "/").
	Root string
}

// nvidiaSMIArgs is the query slurmd-like discovery runs.
var nvidiaSMIArgs = []string{"--query-gpu=index,name,uuid,memory.total", "--format=csv,noheader"}

// Discover returns the GPUs sorted by index; no GPU is not an error.
func (d GPUDiscovery) Discover(ctx context.Context) ([]api.GPU, error) {
	if strings.TrimSpace(d.Static) != "" {
		return ParseGresGPUs(d.Static, d.Node)
	}
	look := d.LookPath
	if look == nil {
		look = exec.LookPath
	}
	if path, err := look("nvidia-smi"); err == nil {
		run := d.Run
		if run == nil {
			run = ExecRunner
		}
		out, err := run(ctx, path, nvidiaSMIArgs...)
		if err == nil {
			gpus, perr := ParseNvidiaSMI(out)
			if perr == nil && len(gpus) > 0 {
				return gpus, nil
			}
		}
		// nvidia-smi present but failing (driver not loaded): fall back
		// to the device files, as slurmd does without NVML.
	}
	return d.devFiles()
}

var (
	devNvidia      = regexp.MustCompile(`^nvidia([0-9]+)$`)
	trailingDigits = regexp.MustCompile(`([0-9]+)$`)
)

func (d GPUDiscovery) devFiles() ([]api.GPU, error) {
	root := d.Root
	if root == "" {
		root = "/"
	}
	ents, err := os.ReadDir(filepath.Join(root, "dev"))
	if err != nil {
		return nil, nil
	}
	var gpus []api.GPU
	for _, e := range ents {
		m := devNvidia.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		idx, _ := strconv.Atoi(m[1])
		gpus = append(gpus, api.GPU{Index: idx, File: "/dev/" + e.Name()})
	}
	sort.Slice(gpus, func(i, j int) bool { return gpus[i].Index < gpus[j].Index })
	return gpus, nil
}

// ParseNvidiaSMI parses `nvidia-smi --query-gpu=index,name,uuid,memory.total
// --format=csv,noheader` output ("0, NVIDIA H100 80GB HBM3, GPU-..., 81559
// MiB"). The gres type is the product name lower-cased with spaces turned
// into underscores and the vendor prefix dropped, close to what slurmd's
// AutoDetect=nvml prints.
func ParseNvidiaSMI(out []byte) ([]api.GPU, error) {
	var gpus []api.GPU
	sc := bufio.NewScanner(bytes.NewReader(out))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f := strings.Split(line, ",")
		if len(f) != 4 {
			return nil, fmt.Errorf("nvidia-smi output line %d: want 4 fields, got %d: %q", n, len(f), line)
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		idx, err := strconv.Atoi(f[0])
		if err != nil || idx < 0 {
			return nil, fmt.Errorf("nvidia-smi output line %d: bad index %q", n, f[0])
		}
		g := api.GPU{Index: idx, Name: f[1], Type: gpuType(f[1]), UUID: f[2], File: fmt.Sprintf("/dev/nvidia%d", idx)}
		g.MemoryMB = parseMiB(f[3])
		gpus = append(gpus, g)
	}
	sort.Slice(gpus, func(i, j int) bool { return gpus[i].Index < gpus[j].Index })
	return gpus, nil
}

func parseMiB(s string) int64 {
	num, _, _ := strings.Cut(strings.TrimSpace(s), " ")
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || v < 0 {
		return 0
	}
	return v
}

func gpuType(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, p := range []string{"nvidia ", "tesla "} {
		n = strings.TrimPrefix(n, p)
	}
	if n == "" || strings.HasPrefix(n, "[") {
		return ""
	}
	return strings.Join(strings.Fields(n), "_")
}

// ParseGresGPUs reads gres.conf-style lines for gpus: `Name=gpu
// [Type=a100] File=/dev/nvidia[0-3]` or `Name=gpu Count=4`, optionally with
// NodeName= (a host list; lines for other nodes are skipped when node is
// set). Comments (#) and other gres names are ignored.
func ParseGresGPUs(text, node string) ([]api.GPU, error) {
	var gpus []api.GPU
	for n, line := range strings.Split(text, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		kv := map[string]string{}
		for _, w := range strings.Fields(line) {
			k, v, _ := strings.Cut(w, "=")
			kv[strings.ToLower(k)] = v
		}
		if len(kv) == 0 || !strings.EqualFold(kv["name"], "gpu") {
			continue
		}
		if nl, ok := kv["nodename"]; ok && node != "" {
			names, err := hostlist.Expand(nl)
			if err != nil {
				return nil, fmt.Errorf("gres.conf line %d: %w", n+1, err)
			}
			if !contains(names, node) {
				continue
			}
		}
		got, err := gresLineGPUs(kv, len(gpus))
		if err != nil {
			return nil, fmt.Errorf("gres.conf line %d: %w", n+1, err)
		}
		gpus = append(gpus, got...)
	}
	sort.Slice(gpus, func(i, j int) bool { return gpus[i].Index < gpus[j].Index })
	return gpus, nil
}

func gresLineGPUs(kv map[string]string, next int) ([]api.GPU, error) {
	typ := kv["type"]
	if file, ok := kv["file"]; ok {
		files, err := hostlist.Expand(file)
		if err != nil {
			return nil, fmt.Errorf("File=%s: %w", file, err)
		}
		out := make([]api.GPU, 0, len(files))
		for _, f := range files {
			m := trailingDigits.FindString(f)
			idx, err := strconv.Atoi(m)
			if err != nil {
				return nil, fmt.Errorf("File=%s: %q has no device number", file, f)
			}
			out = append(out, api.GPU{Index: idx, Type: typ, File: f})
		}
		return out, nil
	}
	c, ok := kv["count"]
	if !ok {
		return nil, fmt.Errorf("Name=gpu needs File= or Count=")
	}
	count, err := strconv.Atoi(c)
	if err != nil || count < 0 || count > 1024 {
		return nil, fmt.Errorf("bad Count=%s", c)
	}
	out := make([]api.GPU, count)
	for i := range out {
		out[i] = api.GPU{Index: next + i, Type: typ}
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
