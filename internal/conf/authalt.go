package conf

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// AuthAltParameters is what Sluice reads of AuthAltParameters (Slurm's
// auth/jwt options); the rest (jwt_key, jwks, userclaimfield) is kept
// and reported.
type AuthAltParameters struct {
	// MaxTokenLifespan is max_token_lifespan: the longest token an
	// ordinary user may get from scontrol token (0: no limit, Slurm's
	// default); root and SlurmUser are not limited, as in slurmctld.
	MaxTokenLifespan time.Duration
	// DisableTokenCreation is disable_token_creation: scontrol token is
	// refused to ordinary users.
	DisableTokenCreation bool
	// Unused are the options Sluice does not act on.
	Unused []string
}

// addAuthKeys adds AuthAltParameters.
func addAuthKeys(add func(string, setter)) {
	add("AuthAltParameters", func(p *parser, pr pair) error {
		a, err := parseAuthAlt(pr.Value)
		p.cfg.AuthAlt = a
		if len(a.Unused) > 0 {
			p.warnf(pr, "options not used by Sluice (kept): %s", strings.Join(a.Unused, ","))
		}
		return err
	})
}

// parseAuthAlt reads AuthAltParameters' comma-separated options.
func parseAuthAlt(v string) (AuthAltParameters, error) {
	var a AuthAltParameters
	for _, opt := range splitList(v) {
		key, val, _ := strings.Cut(opt, "=")
		switch strings.ToLower(key) {
		case "max_token_lifespan":
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil || n <= 0 {
				// slurmctld logs "Invalid AuthAltParameters max_token_lifespan
				// option, no limit enforced"; a limit meant and not applied
				// is an error here.
				return a, fmt.Errorf("invalid max_token_lifespan %q: want a number of seconds > 0", val)
			}
			a.MaxTokenLifespan = time.Duration(n) * time.Second
		case "disable_token_creation":
			a.DisableTokenCreation = true
		default:
			a.Unused = append(a.Unused, opt)
		}
	}
	return a, nil
}
