// The order in which the counters run replays a graph launch, and which kernels it must not profile
// (graph_plan.h). Graphs built in code: no GPU.
#include <catch2/catch.hpp>

#include "counters/graph_plan.h"
#include "counters/selection.h"

using namespace gt;
using namespace gt::counters;

namespace {

GraphNodeInfo K(const char* name) {
  GraphNodeInfo n;
  n.kind = GraphNodeKind::kKernel;
  n.kernel_name = name;
  return n;
}

GraphNodeInfo Node(GraphNodeKind kind, const char* what = "") {
  GraphNodeInfo n;
  n.kind = kind;
  n.unsupported = what;
  return n;
}

}  // namespace

TEST_CASE("a graph is replayed dependencies first, independent nodes in node order", "[counters][graph]") {
  // 0:a -> 2:c, 1:b -> 2:c, 3:memset -> 0:a
  GraphPlan p = PlanGraph({K("a"), K("b"), K("c"), Node(GraphNodeKind::kMemset)}, {{0, 2}, {1, 2}, {3, 0}});
  CHECK(p.not_replayable.empty());
  CHECK(p.order == std::vector<uint32_t>{1, 3, 0, 2});
  CHECK(p.kernels == std::vector<uint32_t>{1, 0, 2});
  CHECK(p.ambiguous == std::vector<char>{0, 0, 0, 0});
}

TEST_CASE("same-name kernels: a chain pairs, parallel branches do not", "[counters][graph]") {
  // Four layers in a chain, with a no-op join node between layer 2 and 3: all ordered.
  GraphPlan chain = PlanGraph({K("layer"), K("layer"), Node(GraphNodeKind::kNoOp), K("layer"), K("layer")},
                              {{0, 1}, {1, 2}, {2, 3}, {3, 4}});
  CHECK(chain.ambiguous == std::vector<char>{0, 0, 0, 0, 0});
  CHECK(chain.kernels == std::vector<uint32_t>{0, 1, 3, 4});

  // The same kernel on two branches of a fork: either may start first, so neither is profiled; the other
  // kernel of the fork is unaffected.
  GraphPlan fork = PlanGraph({K("split"), K("gemm"), K("gemm"), K("join")}, {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  CHECK(fork.not_replayable.empty());
  CHECK(fork.ambiguous == std::vector<char>{0, 1, 1, 0});

  // Ordered through a path of other nodes (not a direct edge) still counts as ordered.
  GraphPlan path = PlanGraph({K("x"), K("y"), K("x")}, {{0, 1}, {1, 2}});
  CHECK(path.ambiguous == std::vector<char>{0, 0, 0});

  // One pair unordered makes the whole group of that name ambiguous: ordinals within it cannot be trusted.
  GraphPlan mixed = PlanGraph({K("x"), K("x"), K("x")}, {{0, 1}, {0, 2}});
  CHECK(mixed.ambiguous == std::vector<char>{1, 1, 1});
}

TEST_CASE("graphs that cannot be replayed say why and still list their kernels", "[counters][graph]") {
  GraphPlan host =
      PlanGraph({K("a"), Node(GraphNodeKind::kUnsupported, "host node"), K("b")}, {{0, 1}, {1, 2}});
  CHECK(host.not_replayable == "the graph has a host node");
  CHECK(host.kernels == std::vector<uint32_t>{0, 2});

  GraphPlan cycle = PlanGraph({K("a"), K("b")}, {{0, 1}, {1, 0}});
  CHECK(cycle.not_replayable == "the graph's dependencies form a cycle");
  CHECK(cycle.kernels == std::vector<uint32_t>{0, 1});

  GraphPlan bad = PlanGraph({K("a")}, {{0, 7}});
  CHECK_FALSE(bad.not_replayable.empty());
  CHECK(bad.kernels == std::vector<uint32_t>{0});

  GraphPlan empty = PlanGraph({}, {});
  CHECK(empty.not_replayable.empty());
  CHECK(empty.order.empty());
}

TEST_CASE("the selector counts graph kernels apart and keeps quotas for what it can profile",
          "[counters][graph]") {
  CountersOptions o;
  o.sets = 1;
  o.per_name_limit = 2;
  auto sel = LaunchSelector::Create(o);
  REQUIRE(sel.ok());
  LaunchSelector& s = **sel;
  using Source = LaunchSelector::Source;
  auto d = s.OnLaunch("k");
  CHECK((d.profile && d.ordinal == 0));
  d = s.OnLaunch("k", Source::kGraph, /*can_profile=*/false);  // wanted, but the graph cannot be replayed
  CHECK((!d.profile && d.wanted && d.ordinal == (kGraphOrdinalBit | 0)));
  d = s.OnLaunch("k", Source::kGraph);
  CHECK((d.profile && d.ordinal == (kGraphOrdinalBit | 1)));
  d = s.OnLaunch("k", Source::kGraph);
  CHECK((d.profile && d.ordinal == (kGraphOrdinalBit | 2)));
  d = s.OnLaunch("k", Source::kGraph);  // per-name limit reached for graph launches of k
  CHECK((!d.profile && !d.wanted && d.ordinal == (kGraphOrdinalBit | 3)));
  d = s.OnLaunch("k");  // direct launches have their own count
  CHECK((d.profile && d.ordinal == 1));
  CHECK(s.profiled() == 4);
  CHECK(s.launches() == 6);
}
