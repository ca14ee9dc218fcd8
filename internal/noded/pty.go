package noded

// srun --pty: the step's task 0 runs on a pseudo-terminal of its node, as
// slurmstepd gives it one. The task is a session leader with the terminal
// as its controlling one (job control, Ctrl-C from srun's raw terminal),
// the terminal's output goes to srun as the task's stdout and srun's
// keystrokes are written to it.

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/sluice-hpc/sluice/internal/api"
)

// openPty opens a new pseudo-terminal pair of size p.
func openPty(p *api.StepPty) (master, slave *os.File, err error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		return nil, nil, fmt.Errorf("unlockpt: %w", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		m.Close()
		return nil, nil, fmt.Errorf("ptsname: %w", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	if p != nil && p.Rows > 0 && p.Cols > 0 {
		unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: p.Rows, Col: p.Cols})
	}
	return m, s, nil
}

// ptyTaskFiles wires cmd to a new pseudo-terminal owned by the task's
// user: stdin, stdout and stderr are its slave side; the agent keeps the
// master for srun's input (files.stdin) and the output (files.stdout).
func (r *stepRun) ptyTaskFiles(cmd *exec.Cmd, files *taskFiles) error {
	m, s, err := openPty(r.req.Pty)
	if err != nil {
		return err
	}
	if r.a.euid == 0 {
		s.Chown(int(r.req.Job.UID), -1)
	}
	out, err := dupFile(m)
	if err != nil {
		m.Close()
		s.Close()
		return err
	}
	// stderr shares the terminal: its pump reads a pipe nobody writes.
	pr, pw, err := os.Pipe()
	if err != nil {
		m.Close()
		s.Close()
		out.Close()
		return err
	}
	pw.Close()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s, s, s
	cmd.SysProcAttr.Setpgid = false
	cmd.SysProcAttr.Setsid, cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, true, 0
	files.child = append(files.child, s)
	files.parent = append(files.parent, m, out, pr)
	files.stdin, files.stdout, files.stderr = m, out, pr
	return nil
}

func dupFile(f *os.File) (*os.File, error) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}
