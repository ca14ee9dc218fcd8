package api

// AllocationMarker is in the script salloc and srun submit for an
// allocation of their own: the job's process on its first node only holds
// the allocation until their command exits, and is not a batch step.
const AllocationMarker = "allocation: held until the command exits"
