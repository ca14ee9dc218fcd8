package ctld

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/testusers"
)

// TestTokenPolicy is issue 17's finding 11: with
// AuthAltParameters=max_token_lifespan an ordinary user cannot get a
// longer token (slurmctld's message; root can, as in Slurm 24.11), and
// rotating the signing key revokes every earlier token.
func TestTokenPolicy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctl, err := New(context.Background(), Options{Conf: testConf(t, dir, 1, "AuthAltParameters=jwt_key=/x,max_token_lifespan=3600"),
		StateDir: dir, Socket: shortSocket(t), Listen: "127.0.0.1:0", Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := ctl.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctl.Close() })
	ctx := context.Background()
	root := api.NewUnixClient(ctl.Socket())
	testusers.Require(t, "alice")
	first, _, _ := IssueToken(ctl.tokenKey(), "alice", time.Now(), time.Hour)
	alice := api.NewTCPClient(ctl.Addr(), first)

	if _, err := alice.Token(ctx, api.TokenRequest{LifespanSec: 7200}); err == nil || !strings.Contains(err.Error(), errTokenLifespan) {
		t.Fatalf("alice's 7200 s token over a 3600 s limit: %v", err)
	}
	if _, err := alice.Token(ctx, api.TokenRequest{LifespanSec: 3600}); err != nil {
		t.Fatalf("alice's 3600 s token: %v", err)
	}
	if _, err := root.Token(ctx, api.TokenRequest{LifespanSec: 7200, Username: "alice"}); err != nil {
		t.Fatalf("root's 7200 s token for alice: %v", err)
	}
	if err := alice.RotateTokenKey(ctx); err == nil {
		t.Fatal("alice rotated the token key")
	}
	if err := root.RotateTokenKey(ctx); err != nil {
		t.Fatalf("rotate: %v", err)
	}
	if _, err := alice.Ping(ctx); err == nil || !strings.Contains(err.Error(), "Invalid authentication credential") {
		t.Fatalf("a token from before the rotation: %v", err)
	}
	res, err := root.Token(ctx, api.TokenRequest{Username: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if w, err := api.NewTCPClient(ctl.Addr(), res.Token).Ping(ctx); err != nil || w.User != "alice" {
		t.Fatalf("a token from after the rotation: %+v, %v", w, err)
	}
	// The new key is the one on disk: a restarted controller keeps it.
	ctl.Close()
	ctl2, err := New(context.Background(), Options{Conf: testConf(t, dir, 1, ""), StateDir: dir, Socket: shortSocket(t),
		Listen: "none", Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := ctl2.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctl2.Close() })
	if _, err := verifyToken(ctl2.tokenKey(), res.Token, time.Now()); err != nil {
		t.Fatalf("the rotated key after a restart: %v", err)
	}
	if _, err := verifyToken(ctl2.tokenKey(), first, time.Now()); err == nil {
		t.Fatal("the old key came back after a restart")
	}
}
