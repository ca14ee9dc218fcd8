package acct

import "github.com/sluice-hpc/sluice/internal/tres"

// tresVec is the type of every TRES limit: internal/tres's Vector
// (`map[string]int64` keyed by canonical TRES names, mem in MB).
type tresVec = tres.Vector
