package conf

import (
	"testing"
	"time"
)

// TestAuthAltParameters reads max_token_lifespan and
// disable_token_creation, keeps the rest, and refuses a lifespan that is
// no number of seconds (slurmctld would run with no limit).
func TestAuthAltParameters(t *testing.T) {
	a, err := parseAuthAlt("jwt_key=/etc/slurm/jwt.key,max_token_lifespan=3600,disable_token_creation")
	if err != nil || a.MaxTokenLifespan != time.Hour || !a.DisableTokenCreation || len(a.Unused) != 1 {
		t.Fatalf("parse: %+v, %v", a, err)
	}
	for _, bad := range []string{"max_token_lifespan=0", "max_token_lifespan=1h", "max_token_lifespan="} {
		if _, err := parseAuthAlt(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
