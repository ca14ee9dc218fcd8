package acct

import (
	"context"
	"fmt"
	"strings"
)

// Store keeps the accounting database. Implementations (sqlstore: SQLite
// and PostgreSQL; MemStore) must make Update atomic: fn sees the current
// state inside a transaction that excludes other writers, and either all
// of its changes are stored or none (when fn or the write fails).
type Store interface {
	// Load returns a private copy of the current state.
	Load(ctx context.Context) (*State, error)
	// Update runs fn on a private copy of the current state and stores
	// what fn changed, atomically; an error from fn stores nothing.
	Update(ctx context.Context, fn func(*State) error) error
	// LoadUsage returns the persisted fair-share usage records.
	LoadUsage(ctx context.Context) ([]Usage, error)
	// SaveUsage inserts or replaces usage records (by Kind and ID).
	SaveUsage(ctx context.Context, us []Usage) error
	// Close releases the store.
	Close() error
}

// RunEnv is what Run needs from its caller besides the store.
type RunEnv struct {
	ExecEnv
	// Confirm shows the pending change and asks whether to commit it
	// (sacctmgr without -i on a terminal); nil commits without asking.
	Confirm func(summary string) bool
	// WriteFile writes dump output (nil: dump prints to stdout).
	WriteFile func(name string, data []byte) error
}

// Run executes one sacctmgr command line (options included, already
// split into words) against a store and returns what sacctmgr prints on
// stdout and as warnings. Errors are *Error values with Slurm's message;
// after an error nothing was changed.
func Run(ctx context.Context, s Store, args []string, env RunEnv) (out string, warnings []string, err error) {
	opts, rest, err := ParseOptions(args)
	if err != nil {
		return "", nil, err
	}
	cmd, err := Parse(rest)
	if err != nil {
		return "", nil, err
	}
	switch cmd.Verb {
	case VerbShow:
		st, err := s.Load(ctx)
		if err != nil {
			return "", nil, err
		}
		if c := st.Clusters[env.Control.Name]; c != nil {
			*c = env.Control // st is Load's private copy
		}
		out, err := Show(NewPolicy(st), cmd, opts)
		return out, nil, err
	case VerbDump:
		return runDump(ctx, s, cmd, env)
	}
	if opts.Readonly {
		return "", nil, errorf("Can't run this command in readonly mode.")
	}
	if env.Confirm != nil && !opts.Immediate {
		return runConfirmed(ctx, s, cmd, env)
	}
	res, err := update(ctx, s, cmd, env.ExecEnv)
	if err != nil {
		return "", nil, err
	}
	return quiet(res.Out.String(), opts), res.Warnings, nil
}

func quiet(s string, o Options) string {
	if o.Quiet {
		return ""
	}
	return s
}

// update runs a modifying command inside one store transaction.
func update(ctx context.Context, s Store, cmd *Command, env ExecEnv) (*Result, error) {
	var res *Result
	err := s.Update(ctx, func(st *State) error {
		r, err := Exec(st, cmd, env)
		res = r
		return err
	})
	return res, err
}

// runConfirmed shows what the command would do, asks, and only then
// applies it for real (re-running it inside the transaction, so a
// concurrent change in between is not overwritten).
func runConfirmed(ctx context.Context, s Store, cmd *Command, env RunEnv) (string, []string, error) {
	st, err := s.Load(ctx)
	if err != nil {
		return "", nil, err
	}
	dry, err := Exec(st, cmd, env.ExecEnv)
	if err != nil {
		return "", nil, err
	}
	if !dry.Changed {
		return dry.Out.String(), dry.Warnings, nil
	}
	if !env.Confirm(dry.Out.String()) {
		return " Changes Discarded\n", dry.Warnings, nil
	}
	res, err := update(ctx, s, cmd, env.ExecEnv)
	if err != nil {
		return "", nil, err
	}
	return "", res.Warnings, nil
}

func runDump(ctx context.Context, s Store, cmd *Command, env RunEnv) (string, []string, error) {
	st, err := s.Load(ctx)
	if err != nil {
		return "", nil, err
	}
	if err := authorize(st, env.Actor, cmd); err != nil {
		return "", nil, err
	}
	text, err := Dump(NewPolicy(st), cmd.Names[0])
	if err != nil {
		return "", nil, err
	}
	if env.WriteFile == nil {
		return text, nil, nil
	}
	if err := env.WriteFile(cmd.File, []byte(text)); err != nil {
		return "", nil, errorf("Can't open file %s: %v", cmd.File, err)
	}
	return fmt.Sprintf(" Dumped cluster %s to %s\n", cmd.Names[0], cmd.File), nil, nil
}

// SplitLine splits a command line into words as a shell would for the
// simple quoting sacctmgr scripts use: blanks separate words, single and
// double quotes group (and are removed), a backslash escapes one
// character. It fails on an unterminated quote.
func SplitLine(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	esc := false
	for _, c := range line {
		switch {
		case esc:
			cur.WriteRune(c)
			esc = false
		case c == '\\' && quote != '\'':
			esc, inWord = true, true
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteRune(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, errorf("Unterminated quote in: %s", line)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// ScriptArgs turns one line of a sacctmgr script into command words: it
// drops comments and blank lines (nil, nil) and a leading `sacctmgr`.
func ScriptArgs(line string) ([]string, error) {
	t := strings.TrimSpace(line)
	if t == "" || strings.HasPrefix(t, "#") {
		return nil, nil
	}
	words, err := SplitLine(t)
	if err != nil || len(words) == 0 {
		return nil, err
	}
	if words[0] == "sacctmgr" || strings.HasSuffix(words[0], "/sacctmgr") {
		words = words[1:]
	}
	return words, nil
}

// ApplyScript runs every modifying command of a sacctmgr script against
// st in memory (show and dump lines are skipped). The simulator uses it
// to build its accounting policy from a trace's sacctmgr.script. The
// first failing line stops it with an error naming the line, and st is
// then left as it was.
func ApplyScript(st *State, script string, env ExecEnv) error {
	work := st.Clone()
	env.bulk = true
	for i, line := range strings.Split(script, "\n") {
		words, err := ScriptArgs(line)
		if err == nil && len(words) > 0 {
			err = applyWords(work, words, env)
		}
		if err != nil {
			return fmt.Errorf("line %d: %w", i+1, err)
		}
	}
	if err := work.Check(); err != nil {
		return fmt.Errorf("script leaves an inconsistent accounting tree: %w", err)
	}
	*st = *work
	return nil
}

// applyWords runs one modifying command in place; on error the state may
// be half changed (ApplyScript then discards its copy).
func applyWords(st *State, words []string, env ExecEnv) error {
	_, rest, err := ParseOptions(words)
	if err != nil {
		return err
	}
	cmd, err := Parse(rest)
	if err != nil {
		return err
	}
	if cmd.Verb == VerbShow || cmd.Verb == VerbDump {
		return nil
	}
	_, err = Exec(st, cmd, env)
	return err
}
