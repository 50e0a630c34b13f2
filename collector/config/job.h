// Which rank of which distributed job a process is, from the variables its launcher set. Read by gcollect
// (for the root process) and by the injection (for every traced process, torchrun's workers included),
// recorded in ProcessRecord so `gtrace merge` can group host -> rank -> GPU and tell jobs apart.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace gt::config {

struct JobIdentity {
  std::string job;    // "" = no launcher named one
  int32_t rank = -1;  // -1 = not a rank of a distributed job
  int32_t local_rank = -1;
  int32_t world_size = 0;
};

// Launchers in order of precedence (the first that names a rank wins, and its own local rank and size go
// with it): torchrun / torch.distributed (RANK, LOCAL_RANK, WORLD_SIZE), Open MPI (OMPI_COMM_WORLD_*), MPICH
// and Intel MPI (PMI_RANK, PMI_SIZE, MPI_LOCALRANKID), Slurm (SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS).
// Job ids: TORCHELASTIC_RUN_ID, SLURM_JOB_ID (with SLURM_STEP_ID), OMPI_MCA_ess_base_jobid, PBS_JOBID,
// LSB_JOBID. Malformed numbers count as absent.
JobIdentity ReadJobIdentity(const std::function<const char*(const char*)>& getenv);

// The boot id (/proc/sys/kernel/random/boot_id): processes with the same one share CLOCK_MONOTONIC.
std::string ReadBootId();

}  // namespace gt::config
