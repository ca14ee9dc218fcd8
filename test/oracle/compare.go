package oracle

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Point names one compared output of a step.
type Point string

// The three points of a command; a wait has only its exit.
const (
	Stdout Point = "stdout"
	Stderr Point = "stderr"
	Exit   Point = "exit"
)

// Diff is one point where Sluice printed something else than Slurm.
type Diff struct {
	Scenario string
	Step     int // 1-based index among the recorded steps
	Line     int // the step's line in the scenario file
	What     string
	Point    Point
	Want     string // the oracle's, normalised
	Got      string // Sluice's, normalised
	Known    string // the reason when it is listed in differences.txt
}

// Tally counts compared and equal points.
type Tally struct {
	Scenarios, Points, Equal int
}

func (t *Tally) add(o Tally) { t.Scenarios += o.Scenarios; t.Points += o.Points; t.Equal += o.Equal }

// String is the summary line of a run.
func (t Tally) String() string {
	pct := 100.0
	if t.Points > 0 {
		pct = 100 * float64(t.Equal) / float64(t.Points)
	}
	return fmt.Sprintf("differential: %d scenarios, %d points compared, %d equal (%.1f%%)", t.Scenarios, t.Points, t.Equal, pct)
}

// Compare checks Sluice's recording against the oracle's, each normalised
// by its own side's normaliser, step by step.
func Compare(sc *Scenario, want *Recording, wn Normalizer, got *Recording, gn Normalizer, known Known) ([]Diff, Tally, error) {
	if want.Hash != HashText(sc.Text) {
		return nil, Tally{}, fmt.Errorf("%s: the golden file was recorded from another version of the scenario: run `make oracle-record ONLY=%s`", sc.Name, sc.Name)
	}
	var steps []Step
	for _, st := range sc.Steps {
		if st.Compared() {
			steps = append(steps, st)
		}
	}
	if len(want.Results) != len(steps) || len(got.Results) != len(steps) {
		return nil, Tally{}, fmt.Errorf("%s: %d steps, oracle recorded %d, sluice %d", sc.Name, len(steps), len(want.Results), len(got.Results))
	}
	var diffs []Diff
	tally := Tally{Scenarios: 1}
	for i, st := range steps {
		w, g := want.Results[i], got.Results[i]
		points := []struct {
			p    Point
			a, b string
		}{{Exit, strconv.Itoa(w.Exit), strconv.Itoa(g.Exit)}}
		if st.Printed() {
			wo, gout := wn.Apply(st, w.Stdout), gn.Apply(st, g.Stdout)
			if st.Sort {
				wo, gout = sortLines(wo), sortLines(gout)
			}
			points = append(points,
				struct {
					p    Point
					a, b string
				}{Stdout, wo, gout},
				struct {
					p    Point
					a, b string
				}{Stderr, wn.Apply(st, w.Stderr), gn.Apply(st, g.Stderr)})
		}
		for _, p := range points {
			tally.Points++
			if p.a == p.b {
				tally.Equal++
				continue
			}
			d := Diff{Scenario: sc.Name, Step: i + 1, Line: st.Line, What: st.String(), Point: p.p, Want: p.a, Got: p.b}
			d.Known = known.Reason(sc.Name, i+1, p.p)
			if st.Kind == Wait && p.p == Exit {
				d.Want, d.Got = w.Stderr+p.a, g.Stderr+p.b
			}
			diffs = append(diffs, d)
		}
	}
	return diffs, tally, nil
}

// Format prints a diff as a reader wants it: where, what, then the two
// texts line by line.
func (d Diff) Format() string {
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s step %d (line %d) %s: %s differs", d.Scenario, d.Step, d.Line, d.What, d.Point)
	if d.Known != "" {
		fmt.Fprintf(&b, " [known: %s]", d.Known)
	}
	b.WriteString("\n")
	wl := strings.Split(d.Want, "\n")
	gl := strings.Split(d.Got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w == g {
			fmt.Fprintf(&b, "    %s\n", w)
			continue
		}
		if i < len(wl) {
			fmt.Fprintf(&b, "  - %s\n", w)
		}
		if i < len(gl) {
			fmt.Fprintf(&b, "  + %s\n", g)
		}
	}
	return b.String()
}

// Known lists the points that differ on purpose or by a bug already filed,
// from differences.txt: "SCENARIO STEP POINT REASON...", where the reason
// names the docs/differences.md section or the issue.
type Known map[string]string

func knownKey(sc string, step int, p Point) string { return fmt.Sprintf("%s %d %s", sc, step, p) }

// Reason is the listed reason of a point, or "".
func (k Known) Reason(sc string, step int, p Point) string { return k[knownKey(sc, step, p)] }

// LoadKnown reads differences.txt; a missing file lists nothing.
func LoadKnown(path string) (Known, error) {
	k := Known{}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return k, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for n := 1; s.Scan(); n++ {
		line := strings.TrimSpace(s.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fs := strings.Fields(line)
		if len(fs) < 4 {
			return nil, fmt.Errorf("%s:%d: want SCENARIO STEP POINT REASON", path, n)
		}
		step, err := strconv.Atoi(fs[1])
		p := Point(fs[2])
		if err != nil || step < 1 || (p != Stdout && p != Stderr && p != Exit) {
			return nil, fmt.Errorf("%s:%d: bad step or point in %q", path, n, line)
		}
		k[knownKey(fs[0], step, p)] = strings.Join(fs[3:], " ")
	}
	return k, s.Err()
}
