package sim_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/sim"
)

// overflowProbe is added to a copy of the report (the report itself has
// no script): after layout it lists every table cell whose text is wider
// than the cell or wraps onto a second line, every table wider than the
// page (it would need scrolling, and a printout cuts it), and every SVG text that
// reaches outside its chart, in the body's data-overflow attribute,
// which headless chromium's --dump-dom prints.
const overflowProbe = `<script>
window.addEventListener('load', () => {
  const bad = [];
  for (const c of document.querySelectorAll('td, th')) {
    const r = document.createRange(); r.selectNodeContents(c);
    const lines = new Set([...r.getClientRects()].map(x => Math.round(x.top)));
    if (c.scrollWidth > c.clientWidth + 1 || lines.size > 1) bad.push('cell: ' + c.textContent);
  }
  for (const d of document.querySelectorAll('.scroll'))
    if (d.scrollWidth > d.clientWidth + 1) bad.push('table wider than the page: ' + d.previousElementSibling.textContent);
  for (const t of document.querySelectorAll('svg text')) {
    const s = t.ownerSVGElement.getBoundingClientRect(), b = t.getBoundingClientRect();
    if (b.left < s.left - 0.5 || b.right > s.right + 0.5 || b.top < s.top - 0.5 || b.bottom > s.bottom + 0.5)
      bad.push('svg text: ' + t.textContent);
  }
  document.body.setAttribute('data-overflow', bad.length ? bad.join(' | ') : 'none');
});
</script>`

// TestReportNoTextOverflowsInBrowser renders a two-policy report of the
// 5,000 SDSC-SP2 jobs (with long account names added) in headless
// chromium (Debian's package: apt-get install chromium), saves a
// screenshot next to the report (in SLUICE_SCREENSHOT_DIR when set, to
// look at it), and requires that no table cell
// overflows or wraps and that no chart label is clipped.
func TestReportNoTextOverflowsInBrowser(t *testing.T) {
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		if os.Getenv("SLUICE_REQUIRE_BROWSER") != "" {
			t.Fatal("no headless browser and SLUICE_REQUIRE_BROWSER is set (apt-get install -y chromium)")
		}
		t.Skip("no headless browser: install Debian's chromium (apt-get install -y chromium) to run the report layout check")
	}
	if testing.Short() {
		t.Skip("starts a browser (skipped with -short)")
	}
	page := browserReport(t)
	dir := os.Getenv("SLUICE_SCREENSHOT_DIR") // keep the report and its screenshot there
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, "report.html")
	probed := strings.Replace(page, "</body>", overflowProbe+"</body>", 1)
	if err := os.WriteFile(path, []byte(probed), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars", "--window-size=1200,900", "--virtual-time-budget=5000"}
	dom := runBrowser(t, browser, append(args, "--dump-dom", "file://"+path)...)
	m := regexp.MustCompile(`data-overflow="([^"]*)"`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the probe did not run; chromium printed:\n%.2000s", dom)
	}
	if m[1] != "none" {
		t.Errorf("text overflows its box: %s", m[1])
	}
	shot := filepath.Join(dir, "report.png")
	tall := append(slices.Clone(args[:len(args)-2]), "--window-size=1200,6000", "--virtual-time-budget=5000") // the whole page
	runBrowser(t, browser, append(tall, "--screenshot="+shot, "file://"+path)...)
	if fi, err := os.Stat(shot); err != nil || fi.Size() == 0 {
		t.Errorf("no screenshot written: %v", err)
	}
	t.Logf("report and screenshot in %s", dir)
}

func runBrowser(t *testing.T, browser string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, browser, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%.2000s", browser, err, errb.String())
	}
	return out.String()
}

// browserReport replays the SDSC subset under FCFS and backfill with
// account names as long as sites use, and renders the report.
func browserReport(t *testing.T) string {
	t.Helper()
	tr, err := sim.ReadFile("../../examples/traces/sdsc-sp2-5k.swf.gz", sim.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr.Jobs = tr.Jobs[:2000]
	for i := range tr.Jobs {
		if j := &tr.Jobs[i]; strings.HasSuffix(j.Account, "1") {
			spec := *j.JobSpec // jobs share their specs read-only
			spec.Account = "computational-chemistry-" + spec.Account
			j.JobSpec = &spec
		}
	}
	var runs []sim.Run
	for _, conf := range []string{"sp2-128-fcfs.conf", "sp2-128-backfill.conf"} {
		r, err := sim.Simulate(sim.Setup{Conf: "../../examples/traces/" + conf}, sim.Options{Trace: tr})
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	var buf bytes.Buffer
	if err := sim.WriteReport(&buf, sim.ReportInput{Title: "Sluice simulation: sdsc-sp2-5k.swf.gz", TraceName: "sdsc-sp2-5k.swf.gz", Trace: tr, Runs: runs}); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}
