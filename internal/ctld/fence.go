package ctld

import "time"

// DefaultFenceFraction is the share of SlurmdTimeout after which a node's
// job supervisor with no agent kills its jobs (noded/fence.go): the
// controller requeues them at SlurmdTimeout, so they are gone by then
// (issue 17, finding 6; Slurm has no such fencing).
const DefaultFenceFraction = 0.5

// fenceAfterSec is the fencing delay agents are given (0: none, as with
// SlurmdTimeout=0, which never marks a node DOWN).
func (c *Controller) fenceAfterSec() int {
	f := c.opts.FenceFraction
	if f == 0 {
		f = DefaultFenceFraction
	}
	if f < 0 || c.cfg.SlurmdTimeout <= 0 {
		return 0
	}
	return int(max(time.Second, time.Duration(f*float64(c.cfg.SlurmdTimeout))) / time.Second)
}
