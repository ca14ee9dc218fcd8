package oracle

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Play brings a target up with the scenario's configuration, plays every
// step and brings it down. progress, when set, gets a line per step.
func Play(ctx context.Context, t Target, sc *Scenario, progress func(string)) (*Recording, error) {
	if progress == nil {
		progress = func(string) {}
	}
	if err := t.Up(ctx, sc); err != nil {
		t.Down()
		return nil, fmt.Errorf("%s: %s up: %w", sc.Name, t.Name(), err)
	}
	defer t.Down()
	rec := &Recording{Scenario: sc.Name, Hash: HashText(sc.Text), Source: t.Source(ctx)}
	for _, st := range sc.Steps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		progress(fmt.Sprintf("%s/%s:%d %s", t.Name(), sc.Name, st.Line, st))
		switch st.Kind {
		case Sleep:
			if err := sleepCtx(ctx, st.Dur); err != nil {
				return nil, err
			}
			continue
		case Sync:
			if err := sleepCtx(ctx, untilTick(time.Now())); err != nil {
				return nil, err
			}
			continue
		case Wait:
			res := waitState(ctx, t, st)
			res.Step = st.String()
			rec.Results = append(rec.Results, res)
		case Rest:
			body := strings.ReplaceAll(st.Body, "@STATE@", t.Normalizer().State)
			res := t.REST(ctx, st.User, st.Method, st.Path, body)
			res.Step = st.String()
			rec.Results = append(rec.Results, res)
		case Run:
			res := t.Exec(ctx, st.User, st.Cmd)
			res.Step = st.String()
			rec.Results = append(rec.Results, res)
		}
	}
	return rec, nil
}

// waitState polls squeue until the job reaches the state; "gone" means
// squeue no longer lists it.
func waitState(ctx context.Context, t Target, st Step) Result {
	deadline := time.Now().Add(st.Dur)
	last := ""
	for {
		r := t.Exec(ctx, "root", "squeue -h -j "+st.JobID+" -o %T")
		last = strings.TrimSpace(r.Stdout)
		if st.State == "gone" && (r.Exit != 0 || last == "") || last == st.State {
			return Result{}
		}
		if time.Now().After(deadline) || sleepCtx(ctx, 250*time.Millisecond) != nil {
			return Result{Stderr: fmt.Sprintf("not reached within %s; last seen %q\n", st.Dur, last), Exit: 1}
		}
	}
}

// untilTick is how long a Sync step sleeps at now: to 50 ms past the
// next whole second.
func untilTick(now time.Time) time.Duration {
	return now.Truncate(time.Second).Add(time.Second + 50*time.Millisecond).Sub(now)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}
