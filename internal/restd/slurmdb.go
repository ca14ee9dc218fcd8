package restd

// slurmdbOps are the /slurmdb/VERSION operations (slurmdbd's).
func slurmdbOps() []op { return nil }
