package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// hugeHeapChild, set in a child test process, allocates 48 MiB after
// hugeHeap ("advised") or without it ("control") and prints the process's
// AnonHugePages in KiB. A child starts with a fresh heap: the parent's
// earlier tests leave free heap in 4 KiB pages that allocations would
// reuse.
const hugeHeapChild = "SLUICE_TEST_HUGEHEAP_CHILD"

func TestHugeHeapChild(t *testing.T) {
	mode := os.Getenv(hugeHeapChild)
	if mode == "" {
		t.Skip("run by TestHugeHeapBacksTheHeapWithHugePages")
	}
	if mode == "advised" && !hugeHeap(128<<20) {
		fmt.Println("hugeHeap false")
		return
	}
	var keep [][]byte
	for range 48 {
		b := make([]byte, 1<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		keep = append(keep, b)
	}
	fmt.Println("huge", anonHugeKiB(t), len(keep))
}

// anonHugeKiB sums AnonHugePages over the process's mappings.
func anonHugeKiB(t *testing.T) int {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sum := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "AnonHugePages:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			sum += n
		}
	}
	return sum
}

// Under THP mode "madvise" the replay's heap gets huge pages only through
// hugeHeap: 48 MiB allocated after it are mostly in 2 MiB pages, and
// without it in none. Under "always" both get them; under "never"
// hugeHeap reports false.
func TestHugeHeapBacksTheHeapWithHugePages(t *testing.T) {
	mode := thpMode()
	child := func(which string) string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHugeHeapChild$", "-test.v")
		cmd.Env = append(os.Environ(), hugeHeapChild+"="+which)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s child: %v\n%s", which, err, out)
		}
		for _, l := range bytes.Split(out, []byte("\n")) {
			if f := strings.Fields(string(l)); len(f) >= 2 && (f[0] == "huge" || f[0] == "hugeHeap") {
				return f[1]
			}
		}
		t.Fatalf("%s child printed no figure:\n%s", which, out)
		return ""
	}
	switch mode {
	case "never", "":
		if got := child("advised"); got != "false" {
			t.Errorf("THP mode %q: hugeHeap gave %s KiB of huge pages, want false", mode, got)
		}
		t.Skipf("THP mode %q: the kernel gives no huge pages", mode)
	}
	advised, _ := strconv.Atoi(child("advised"))
	t.Logf("THP mode %s: %d KiB of huge pages after hugeHeap", mode, advised)
	if advised < 32<<10 {
		t.Errorf("THP mode %s: 48 MiB allocated after hugeHeap are in %d KiB of huge pages, want at least 32 MiB", mode, advised)
	}
	if mode == "madvise" {
		control, _ := strconv.Atoi(child("control"))
		t.Logf("%d KiB without", control)
		if control >= 16<<10 {
			t.Errorf("THP mode madvise: without hugeHeap 48 MiB are in %d KiB of huge pages; the test proves nothing", control)
		}
	}
}
