package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/resv"
)

// Advanced reservations and licenses in the commands (issue 8): scontrol
// create/update/delete/show reservation and show licenses, sinfo -T and
// sreport reservation utilization. The controller renders everything
// from its state (internal/resv's layouts); these functions only pass
// the words and print the answer or Slurm's error line.

// reservation runs scontrol create|update|delete reservation: words are
// scontrol's arguments from the verb on. scontrol's own usage mistakes are
// reported before asking the controller; a rejection prints
// "Error creating the reservation: MESSAGE" (updating, deleting) and
// exits 1, as Slurm's scontrol does.
func (s *scontrolRun) reservation(words []string) int {
	cmd, err := resv.ParseCommand(words)
	if err != nil {
		verb := resv.Verb(strings.ToLower(words[0]))
		fmt.Fprintln(s.env.Stderr, resv.ClientMessage(verb, wordAt(words, 1), err))
		return 1
	}
	res, err := s.cl.ReservationCommand(s.ctx, api.ResvCommandRequest{Words: words, OneLiner: s.oneLiner})
	if err != nil {
		var ae *api.Error
		if !errors.As(err, &ae) {
			return clientError(s.env, "scontrol", err)
		}
		if cmd.Verb == resv.VerbShow {
			fmt.Fprintln(s.env.Stdout, ae.Message)
			return 1
		}
		var e error = errors.New(ae.Message)
		if ae.Reason == "usage" { // scontrol's own message (ctld.ResvUsageReason)
			e = &resv.UsageError{Msg: ae.Message}
		}
		fmt.Fprintln(s.env.Stderr, resv.ClientMessage(cmd.Verb, wordAt(words, 1), e))
		return 1
	}
	fmt.Fprint(s.env.Stdout, res.Text)
	return 0
}

// wordAt returns words[i], "" past the end.
func wordAt(words []string, i int) string {
	if i < len(words) {
		return words[i]
	}
	return ""
}

// showLicenses prints scontrol show licenses [NAME].
func (s *scontrolRun) showLicenses(name string) int {
	res, err := s.cl.Licenses(s.ctx, name, s.oneLiner)
	if err != nil {
		return clientError(s.env, "scontrol", err)
	}
	fmt.Fprint(s.env.Stdout, res.Text)
	return 0
}

// sinfoWantsReservations reports whether sinfo was asked for -T
// (--reservation), which prints the reservations instead of the nodes.
func sinfoWantsReservations(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--reservation" || a == "-T" {
			return true
		}
	}
	return false
}

// sinfoReservations prints sinfo -T.
func sinfoReservations(ctx context.Context, env *Env) int {
	cl, err := controllerClient(env)
	if err != nil {
		return clientError(env, "sinfo", err)
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := cl.ReservationsSinfo(ctx)
	if err != nil {
		return clientError(env, "sinfo", err)
	}
	fmt.Fprint(env.Stdout, res.Text)
	return 0
}

// sreportReservation runs `sreport reservation utilization` when args
// name that report (ok false otherwise): the period and -p/-P are read
// as for the other reports; usage is in CPU minutes.
func sreportReservation(ctx context.Context, env *Env, args []string) (rc int, ok bool) {
	var kinds []int
	for i, a := range args {
		if !strings.HasPrefix(a, "-") && !strings.Contains(a, "=") {
			kinds = append(kinds, i)
		}
	}
	if len(kinds) < 2 || !strings.EqualFold(args[kinds[0]], "reservation") ||
		!strings.HasPrefix("utilization", strings.ToLower(args[kinds[1]])) || len(args[kinds[1]]) < 2 {
		return 0, false
	}
	rest := append([]string(nil), args...)
	rest[kinds[0]], rest[kinds[1]] = "cluster", "utilization"
	o, err := parseSreport(rest)
	if err != nil {
		return Errorf(env, "sreport", "%v", err), true
	}
	start, end, err := sreportPeriod(o, time.Now(), time.Local)
	if err != nil {
		return Errorf(env, "sreport", "%v", err), true
	}
	cl, err := controllerClient(env)
	if err != nil {
		return clientError(env, "sreport", err), true
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := cl.ReservationUtilization(ctx, start, end, o.parsable || o.parsable2)
	if err != nil {
		return clientError(env, "sreport", err), true
	}
	text := res.Text
	if o.noHeader {
		text = dropHeader(text, o.parsable || o.parsable2)
	}
	fmt.Fprint(env.Stdout, text)
	return 0, true
}

// dropHeader removes sreport's banner and column header (-n): the first
// line of parsable output, else everything through the dashed line.
func dropHeader(text string, parsable bool) string {
	lines := strings.SplitAfter(text, "\n")
	if parsable {
		return strings.Join(lines[1:], "")
	}
	for i, l := range lines {
		if strings.HasPrefix(l, "---------") && strings.Contains(l, " -") {
			return strings.Join(lines[i+1:], "")
		}
	}
	return text
}
