#include "config/job.h"

#include <cstdio>
#include <cstdlib>

namespace gt::config {
namespace {

bool ParseInt(const char* s, int32_t* out) {
  if (!s || !*s) return false;
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (*end != '\0' || v < 0 || v > INT32_MAX) return false;
  *out = int32_t(v);
  return true;
}

struct RankVars {
  const char *rank, *local_rank, *size;
};
constexpr RankVars kLaunchers[] = {
    {"RANK", "LOCAL_RANK", "WORLD_SIZE"},
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE"},
    {"SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS"},
};
constexpr const char* kJobVars[] = {"TORCHELASTIC_RUN_ID", "SLURM_JOB_ID", "OMPI_MCA_ess_base_jobid",
                                    "PBS_JOBID", "LSB_JOBID"};

}  // namespace

JobIdentity ReadJobIdentity(const std::function<const char*(const char*)>& getenv) {
  JobIdentity id;
  for (const RankVars& l : kLaunchers) {
    int32_t rank = -1;
    if (!ParseInt(getenv(l.rank), &rank)) continue;
    id.rank = rank;
    ParseInt(getenv(l.local_rank), &id.local_rank);
    ParseInt(getenv(l.size), &id.world_size);
    break;
  }
  for (const char* name : kJobVars) {
    const char* v = getenv(name);
    if (!v || !*v) continue;
    id.job = v;
    if (std::string(name) == "SLURM_JOB_ID")
      if (const char* step = getenv("SLURM_STEP_ID"); step && *step) id.job += std::string(".") + step;
    break;
  }
  return id;
}

std::string ReadBootId() {
  std::string id;
  if (FILE* f = std::fopen("/proc/sys/kernel/random/boot_id", "r")) {
    char buf[64] = {0};
    if (std::fgets(buf, sizeof buf, f)) id = buf;
    std::fclose(f);
  }
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  return id;
}

}  // namespace gt::config
