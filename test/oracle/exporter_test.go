package oracle

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// exporterScenario gives the exporter something of every kind: a running
// job holding a license, a pending one, a finished one. The license job
// is started by a scheduling pass before the big job is submitted (both
// sides schedule on a whole-second tick).
const exporterScenario = `# exporter
conf Licenses=matlab:2
$ sacctmgr -i add account research >/dev/null
$ sacctmgr -i add user alice,bob Account=research >/dev/null
alice$ sbatch -o /dev/null -J done --wrap true
alice$ sbatch -o /dev/null -n2 -L matlab:1 -J run --wrap 'sleep 120'
sleep 2
bob$ sbatch -o /dev/null -N4 --exclusive -J big --wrap 'sleep 120'
sleep 3
`

// TestExporterFamilies runs rivosinc/prometheus-slurm-exporter in its JSON
// mode (squeue, sinfo, sdiag and scontrol show lic --json) against the
// oracle and against Sluice, and compares the metric families it exports:
// names, types, label names, and whether each scrape error counter counts
// (Slurm 24.11's sinfo and squeue replies fail its parser; Sluice's must
// fail it the same way). SLUICE_EXPORTER=PATH of its binary and
// ORACLE_SH=PATH of oracle.sh; skipped without them.
func TestExporterFamilies(t *testing.T) {
	exp, sh := os.Getenv("SLUICE_EXPORTER"), os.Getenv("ORACLE_SH")
	if exp == "" || sh == "" {
		t.Skip("set SLUICE_EXPORTER=PATH of rivosinc/prometheus-slurm-exporter and ORACLE_SH=PATH of oracle.sh")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: it starts clusters")
	}
	sc, err := ParseScenario("exporter", exporterScenario)
	if err != nil {
		t.Fatal(err)
	}
	sluice := sluiceTarget(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	oracle := &OracleTarget{Script: sh}
	want, err := exporterOn(ctx, oracle, sc, exp, func() []string { return oracleWrappers(t, sh) })
	if err != nil {
		t.Fatal(err)
	}
	got, err := exporterOn(ctx, sluice, sc, exp, func() []string {
		return []string{"PATH=" + filepath.Join(sluice.state, "bin") + ":/usr/bin:/bin", "SLURM_CONF=" + sluice.conf}
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range sortedUnion(want, got) {
		if want[name] != got[name] {
			t.Errorf("%s: Slurm %q, Sluice %q", name, want[name], got[name])
		}
	}
	t.Logf("%d metric families compared", len(want))
}

// exporterOn brings the target up, plays the scenario's steps, runs the
// exporter with env() and returns its families.
func exporterOn(ctx context.Context, tg Target, sc *Scenario, exp string, env func() []string) (map[string]string, error) {
	if err := tg.Up(ctx, sc); err != nil {
		tg.Down()
		return nil, err
	}
	defer tg.Down()
	for _, st := range sc.Steps {
		switch st.Kind {
		case Run:
			if r := tg.Exec(ctx, st.User, st.Cmd); r.Exit != 0 {
				return nil, fmt.Errorf("%s: %s: exit %d %s", tg.Name(), st, r.Exit, r.Stderr)
			}
		case Sleep:
			if err := sleepCtx(ctx, st.Dur); err != nil {
				return nil, err
			}
		}
	}
	return scrapeExporter(ctx, exp, env())
}

// scrapeExporter starts the exporter, scrapes it twice (its collectors
// fetch in the background after the first) and returns the families of
// the second scrape.
func scrapeExporter(ctx context.Context, exp string, env []string) (map[string]string, error) {
	port, err := api.FreePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.CommandContext(ctx, exp, "-web.listen-address", addr, "-slurm.cli-fallback=false",
		"-slurm.collect-licenses", "-slurm.collect-diags", "-slurm.poll-limit", "1")
	cmd.Env = append(cleanEnv(), env...)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var text string
	for i := 0; i < 2; i++ {
		if err := sleepCtx(ctx, 3*time.Second); err != nil {
			return nil, err
		}
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		text = string(b)
	}
	return metricFamilies(text), nil
}

// metricFamilies reads Prometheus' text format: for each family of the
// exporter (not the Go runtime's) its type and label names, and for a
// scrape error counter whether it counts.
func metricFamilies(text string) map[string]string {
	out := map[string]string{}
	labels := map[string]map[string]bool{}
	s := bufio.NewScanner(strings.NewReader(text))
	for s.Scan() {
		l := s.Text()
		if f := strings.Fields(l); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			out[f[2]] = f[3]
			continue
		}
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		name, rest, _ := strings.Cut(l, "{")
		value := l[strings.LastIndex(l, " ")+1:]
		if rest == "" {
			name, _, _ = strings.Cut(l, " ")
		}
		if labels[name] == nil {
			labels[name] = map[string]bool{}
		}
		for _, kv := range strings.Split(strings.SplitN(rest, "}", 2)[0], ",") {
			if k, _, ok := strings.Cut(kv, "="); ok {
				labels[name][k] = true
			}
		}
		if strings.Contains(name, "scrape_error") {
			labels[name]["counts="+strconv.FormatBool(value != "0")] = true
		}
	}
	for name := range out {
		if strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") || strings.HasPrefix(name, "promhttp_") {
			delete(out, name)
			continue
		}
		var ls []string
		for k := range labels[name] {
			ls = append(ls, k)
		}
		sort.Strings(ls)
		out[name] += " " + strings.Join(ls, ",")
	}
	return out
}

// oracleWrappers makes squeue, sinfo, sdiag, scontrol and sacctmgr
// commands that run in the oracle, and returns the PATH that finds them.
func oracleWrappers(t *testing.T, sh string) []string {
	dir := t.TempDir()
	for _, c := range []string{"squeue", "sinfo", "sdiag", "scontrol", "sacctmgr"} {
		script := fmt.Sprintf("#!/bin/sh\nexec %q exec -- %s \"$@\"\n", sh, c)
		if err := os.WriteFile(filepath.Join(dir, c), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return []string{"PATH=" + dir + ":" + os.Getenv("PATH")}
}

func sortedUnion(a, b map[string]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]string{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}
