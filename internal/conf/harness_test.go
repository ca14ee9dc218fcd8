package conf

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// fixtures is the shared directory of acceptance configurations.
const fixtures = "../../../shared/fixtures/"

// ubccr is the UB CCR medium cluster's real slurm.conf from the traces.
const ubccr = "../../../shared/traces/ubccr-medium-cluster/"

// examples is the repository's own examples directory (copies of the
// fixtures, always present in a checkout).
const examples = "../../examples/"

// needShared skips a test that reads the shared directory beside the
// repository when a bare clone lacks it; where it exists (CI, the team's
// checkout) the test runs.
func needShared(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("%s not present (%v); run from the team checkout", dir, err)
	}
}

// minimal is the smallest valid config the scenario tests extend.
const minimal = "ClusterName=t\nSlurmctldHost=ctl\n"

// parseOK parses text (as file "t.conf") and fails the test on error.
func parseOK(t *testing.T, text string) (*Config, []Warning) {
	t.Helper()
	c, w, err := ParseOptions("t.conf", []byte(text), Options{})
	if err != nil {
		t.Fatalf("unexpected error:\n%v\nconfig:\n%s", err, text)
	}
	return c, w
}

// parseFail parses text and returns the error message, failing the test
// if the config was accepted.
func parseFail(t *testing.T, text string) string {
	t.Helper()
	_, _, err := ParseOptions("t.conf", []byte(text), Options{})
	if err == nil {
		t.Fatalf("config accepted, want an error:\n%s", text)
	}
	return err.Error()
}

// cpuNodes writes a NodeName line for n nodes name[1-n] with cpus each.
func cpuNodes(name string, n, cpus int) string {
	return "NodeName=" + name + "[1-" + itoa(n) + "] CPUs=" + itoa(cpus) + " RealMemory=1000\n"
}

// gpuNodes writes a NodeName line for n nodes with gpus GPUs of a type.
func gpuNodes(name string, n, gpus int, typ string) string {
	g := "gpu:" + itoa(gpus)
	if typ != "" {
		g = "gpu:" + typ + ":" + itoa(gpus)
	}
	return "NodeName=" + name + "[1-" + itoa(n) + "] CPUs=32 RealMemory=64000 Gres=" + g + "\n"
}

func itoa(n int) string { return strconv.Itoa(n) }

// hasWarning reports whether a warning mentions every given fragment.
func hasWarning(ws []Warning, frags ...string) bool {
	for _, w := range ws {
		s := w.String()
		ok := true
		for _, f := range frags {
			ok = ok && strings.Contains(s, f)
		}
		if ok {
			return true
		}
	}
	return false
}
