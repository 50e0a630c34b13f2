// Distributed jobs: -o patterns (one command line on every rank writes one file per rank) and which rank of
// which job a process is.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "config/job.h"
#include "launcher/output_name.h"

using namespace gt;
using namespace gt::config;
using namespace gt::launcher;

namespace {
std::map<std::string, std::string> env = {{"RANK", "3"}, {"SLURM_PROCID", "12"}, {"ODD", "a/b"}};
const char* Get(const char* name) {
  auto it = env.find(name);
  return it == env.end() ? nullptr : it->second.c_str();
}
StatusOr<std::string> Expand(const std::string& p) {
  return ExpandOutputPattern(p, "node-7", 4242, Get);
}
}  // namespace

TEST_CASE("output name: %h, %p, %q{VAR} and %% expand") {
  CHECK(*Expand("run_%q{RANK}") == "run_3");
  CHECK(*Expand("job_%h_%p") == "job_node-7_4242");
  CHECK(*Expand("out/%q{SLURM_PROCID}-%h.gtrace") == "out/12-node-7.gtrace");
  CHECK(*Expand("100%%") == "100%");
  CHECK(*Expand("plain") == "plain");
  CHECK(*Expand("r%q{ODD}") == "ra_b");  // a value never adds a directory
}

TEST_CASE("output name: mistakes are errors that say what to write") {
  auto unset = Expand("run_%q{LOCAL_RANK}");
  REQUIRE_FALSE(unset.ok());
  CHECK(unset.status().message().find("%q{LOCAL_RANK} names an unset environment variable") !=
        std::string::npos);
  CHECK(Expand("x%").status().message().find("lone %") != std::string::npos);
  CHECK(Expand("x%z").status().message().find("unknown %z") != std::string::npos);
  CHECK(Expand("x%q").status().message().find("%q needs a variable name") != std::string::npos);
  CHECK(Expand("x%q{}").status().message().find("%q needs a variable name") != std::string::npos);
  CHECK(Expand("x%qRANK").status().message().find("%q needs a variable name") != std::string::npos);
}

namespace {
JobIdentity Identity(std::map<std::string, std::string> vars) {
  return ReadJobIdentity([&vars](const char* n) -> const char* {
    auto it = vars.find(n);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}
}  // namespace

TEST_CASE("job identity: torchrun, Open MPI, Slurm, and nothing") {
  auto t = Identity({{"RANK", "5"},
                     {"LOCAL_RANK", "1"},
                     {"WORLD_SIZE", "8"},
                     {"TORCHELASTIC_RUN_ID", "abc"},
                     {"SLURM_PROCID", "0"},
                     {"SLURM_JOB_ID", "77"}});
  CHECK(t.rank == 5);
  CHECK(t.local_rank == 1);
  CHECK(t.world_size == 8);
  CHECK(t.job == "abc");  // torchrun's run id before Slurm's job
  auto m = Identity(
      {{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "4"}});
  CHECK((m.rank == 3 && m.local_rank == 0 && m.world_size == 4 && m.job.empty()));
  auto s = Identity({{"SLURM_PROCID", "9"},
                     {"SLURM_LOCALID", "1"},
                     {"SLURM_NTASKS", "16"},
                     {"SLURM_JOB_ID", "77"},
                     {"SLURM_STEP_ID", "2"}});
  CHECK((s.rank == 9 && s.local_rank == 1 && s.world_size == 16 && s.job == "77.2"));
  auto none = Identity({});
  CHECK((none.rank == -1 && none.local_rank == -1 && none.world_size == 0 && none.job.empty()));
  auto bad = Identity({{"RANK", "x1"}, {"PMI_RANK", "2"}, {"PMI_SIZE", "4"}});
  CHECK((bad.rank == 2 && bad.world_size == 4));  // a malformed RANK falls through to the next launcher
}

TEST_CASE("job identity: the boot id is read") {
  CHECK(ReadBootId().size() == 36);  // a UUID on every Linux since 2.6
}
