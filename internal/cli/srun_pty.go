package cli

// srun --pty: task 0 of the step runs on a pseudo-terminal of the step's
// first node; srun puts its own terminal in raw mode, sends every
// keystroke to it (Ctrl-C included, which the remote terminal turns into
// SIGINT) and writes its output as it comes.

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/sluice-hpc/sluice/internal/api"
)

// srunPty prepares --pty: without a terminal on stdin it says so as Slurm
// does and runs the step without one (nil); otherwise it returns the
// terminal's size for the step and a function that restores the terminal.
func srunPty(env *Env, o *srunOpts) (*api.StepPty, func()) {
	f, ok := env.Stdin.(*os.File)
	var ws *unix.Winsize
	var err error
	if ok && env.IsTerminal {
		ws, err = unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	}
	if !ok || !env.IsTerminal || err != nil {
		fmt.Fprintln(env.Stderr, "srun: error: ioctl(TIOCGWINSZ): Inappropriate ioctl for device")
		fmt.Fprintln(env.Stderr, "srun: error: Not using a pseudo-terminal, disregarding --pty option")
		return nil, func() {}
	}
	o.unbuffered, o.label, o.input = true, false, "0"
	restore := func() {}
	if old, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS); err == nil {
		raw := *old
		raw.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
		raw.Oflag &^= unix.OPOST
		raw.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
		raw.Cflag &^= unix.CSIZE | unix.PARENB
		raw.Cflag |= unix.CS8
		raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
		if unix.IoctlSetTermios(int(f.Fd()), unix.TCSETS, &raw) == nil {
			restore = func() { unix.IoctlSetTermios(int(f.Fd()), unix.TCSETS, old) }
		}
	}
	return &api.StepPty{Rows: ws.Row, Cols: ws.Col}, restore
}
