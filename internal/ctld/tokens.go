package ctld

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// Token policy (issue 17, finding 11): AuthAltParameters=max_token_lifespan
// bounds what an ordinary user may ask of scontrol token, and rotating
// the signing key revokes every token signed before.

// errTokenLifespan is slurmctld's refusal of a lifespan over
// max_token_lifespan (oracle, Slurm 24.11: ESLURM_INVALID_TIME_LIMIT's
// text; root and SlurmUser may exceed it).
const errTokenLifespan = "Requested time limit is invalid (missing or exceeds some limit)"

// rotatedKeys holds each controller's current signing key once rotated
// (a Controller's own fields belong to controller.go).
var rotatedKeys sync.Map

// tokenKey is the key tokens are signed and checked with now.
func (c *Controller) tokenKey() []byte {
	if k, ok := rotatedKeys.Load(c); ok {
		return k.([]byte)
	}
	return c.jwtKey
}

// tokenPrivileged reports whether w is exempt from the token policy.
func (c *Controller) tokenPrivileged(w Who) bool {
	return w.UID == 0 || int(w.UID) == c.slurmUID
}

// checkTokenRequest applies disable_token_creation and
// max_token_lifespan to an ordinary user's request.
func (c *Controller) checkTokenRequest(w Who, life time.Duration) error {
	if c.tokenPrivileged(w) {
		return nil
	}
	a := c.cfg.AuthAlt
	if a.DisableTokenCreation {
		return &apiErr{status: http.StatusForbidden, msg: sched.ErrAccessDenied.Error() + " (AuthAltParameters=disable_token_creation)"}
	}
	if a.MaxTokenLifespan > 0 && life > a.MaxTokenLifespan {
		c.log.Warn("rejecting token lifespan over max_token_lifespan", "user", w.User, "uid", w.UID,
			"lifespan_s", int64(life/time.Second), "limit_s", int64(a.MaxTokenLifespan/time.Second))
		return &apiErr{status: http.StatusBadRequest, msg: errTokenLifespan}
	}
	return nil
}

// RotateTokenKey replaces the signing key (StateSaveLocation/
// jwt_hs256.key, written 0600 and renamed into place): every token
// signed before fails from now on.
func (c *Controller) RotateTokenKey() error {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	path := filepath.Join(c.opts.StateDir, JWTKeyFile)
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		return fmt.Errorf("rotate token key: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("rotate token key: %w", err)
	}
	rotatedKeys.Store(c, key)
	c.log.Warn("token signing key rotated: every earlier token is revoked", "file", path)
	return nil
}

// registerTokenRoutes adds the key rotation route (root and SlurmUser).
func (c *Controller) registerTokenRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST "+api.PathTokenRotate, c.endpoint(func(ctx context.Context, w Who, _ *http.Request) (any, error) {
		if !c.tokenPrivileged(w) {
			return nil, denied()
		}
		return struct{}{}, c.RotateTokenKey()
	}))
}
