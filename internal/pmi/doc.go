// Package pmi is the process management interface of MPI jobs: what
// srun --mpi=pmi2 gives each task of a step (Slurm's mpi/pmi2 plugin).
//
// Each task gets one end of a socketpair (PMI_FD, with PMI_RANK, PMI_SIZE,
// PMI_JOBID) and speaks PMI-1's line protocol ("cmd=init pmi_version=1",
// what Debian's MPICH uses) or PMI-2's length-prefixed one ("cmd=fullinit;"
// after a PMI-1 style init asking for version 2). The node's Server answers
// them: job attributes (PMI_process_mapping), and a key-value space where
// what the node's tasks put becomes visible to every task of the step at
// the next fence (PMI-1 barrier, PMI-2 kvs-fence). A fence is the one
// exchange between nodes: when all the node's tasks have entered it, the
// Server hands the node's new pairs to its Exchange (Sluice's node agent
// sends them to srun over the step's I/O connection; srun merges every
// node's and sends the whole back), then answers the tasks. No file system
// is shared.
package pmi
