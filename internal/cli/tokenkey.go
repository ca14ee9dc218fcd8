package cli

import (
	"context"
	"fmt"
)

func init() {
	Register(Command{Name: "rotate-token-key", Summary: "replace the controller's token signing key, revoking every token (root, SlurmUser)",
		Run: runRotateTokenKey})
}

// runRotateTokenKey asks the controller for a new token signing key:
// every token of scontrol token issued before stops working (Slurm has
// no such command; its key changes by editing jwt_key and restarting).
func runRotateTokenKey(ctx context.Context, env *Env, args []string) int {
	if len(args) > 0 {
		if args[0] == "-h" || args[0] == "--help" {
			fmt.Fprintln(env.Stdout, "Usage: sluice rotate-token-key\n\nReplaces StateSaveLocation/jwt_hs256.key: every token issued before is revoked.")
			return 0
		}
		return Errorf(env, "rotate-token-key", "unexpected argument %q", args[0])
	}
	cl, err := controllerClient(env)
	if err != nil {
		return clientError(env, "rotate-token-key", err)
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := cl.RotateTokenKey(ctx); err != nil {
		return clientError(env, "rotate-token-key", err)
	}
	fmt.Fprintln(env.Stdout, "Token signing key replaced: every earlier token is revoked")
	return 0
}
