// ViewState: round trip, URL safety, hostile input.
#include <catch2/catch.hpp>
#include <cctype>

#include "gt/viewer/view_state.h"
#include "synth_trace.h"
#include "test_util.h"

using namespace gt;
using namespace gt::viewer;

TEST_CASE("view state round-trips and is URL-safe", "[viewstate]") {
  ViewState v;
  v.t0 = -5;
  v.t1 = 1'700'000'000'123'456'789;
  v.expanded = {"p10/t11/ranges", "g0"};
  v.collapsed = {"g0/p10/c1/s7", "weird key!*~ é"};
  v.selected = "p10/t11/api/0/2";
  v.panel = "kernels";
  v.search = "gemm & relu";
  std::string s = v.Serialize();
  for (unsigned char c : s)
    REQUIRE((std::isalnum(c) || c == '.' || c == '_' || c == '-' || c == '~' || c == '!' || c == '*'));
  auto p = ViewState::Parse(s);
  REQUIRE(p.ok());
  CHECK(p.value() == v);
  auto empty = ViewState::Parse(ViewState{}.Serialize());
  REQUIRE(empty.ok());
  CHECK(empty.value() == ViewState{});
}

TEST_CASE("view state keys resolve on a fresh load of the same trace", "[viewstate]") {
  auto m1 = test::SmallTrace(), m2 = test::SmallTrace();
  EventId e = test::FindByName(*m1, "relu");
  ViewState v;
  v.selected = m1->EventKey(e);
  v.collapsed = {m1->tracks[1].key};
  auto p = ViewState::Parse(v.Serialize());
  REQUIRE(p.ok());
  CHECK(m2->FindEventByKey(p.value().selected) == e);
  CHECK(m2->FindTrackByKey(p.value().collapsed[0]) == 1);
}

TEST_CASE("view state: hostile input is rejected, never crashes", "[viewstate]") {
  for (std::string bad : {"", "v2!0!1!!!!!", "v1", "v1!0!1!!!!", "v1!0!1!!!!!!!", "v1!x!1!!!!!",
                          "v1!5!1!!!!!", "v1!0!1!~!!!!", "v1!0!1!~G0!!!!", "v1!0!1!a**b!!!!",
                          "v1!0!1!!!a b!!", "v1!99999999999999999999!1!!!!!", "v1!0!1!!!~4!!"}) {
    INFO(bad);
    CHECK_FALSE(ViewState::Parse(bad).ok());
  }
  CHECK_FALSE(ViewState::Parse(std::string(100000, 'a')).ok());
  gt::synth::Rng rng(11);
  const std::string alphabet = "v1!*~0123456789abcdefABCDEF-._/ %";
  for (int i = 0; i < 20000; ++i) {
    std::string s = "v1!";
    int n = rng.Below(40);
    for (int k = 0; k < n; ++k) s += alphabet[rng.Below(uint32_t(alphabet.size()))];
    auto r = ViewState::Parse(s);
    if (r.ok()) CHECK(ViewState::Parse(r.value().Serialize()).value() == r.value());
  }
}

TEST_CASE("view state v2: a comparison keeps its alignment and B's selection; v1 links still open") {
  ViewState v;
  v.t0 = 10, v.t1 = 20, v.selected = "g0/p1/s7/0/3", v.panel = "compare";
  CHECK(v.Serialize().rfind("v1!", 0) == 0);  // one trace: written as before
  v.compared = true;
  v.compare_align = "step:2";
  v.compare_selected = "g0/p1/s7/0/4";
  const std::string text = v.Serialize();
  CHECK(text.rfind("v2!", 0) == 0);
  auto back = ViewState::Parse(text);
  REQUIRE(back.ok());
  CHECK(*back == v);
  v.compare_align = "";  // automatic
  v.compare_selected = "";
  back = ViewState::Parse(v.Serialize());
  REQUIRE(back.ok());
  CHECK(back->compared);
  CHECK(*back == v);
  auto old = ViewState::Parse("v1!0!100!!!!kernels!");
  REQUIRE(old.ok());
  CHECK_FALSE(old->compared);
  CHECK(old->panel == "kernels");
  CHECK_FALSE(ViewState::Parse("v2!0!1!!!!!!").ok());  // v2 has 10 fields, not 9
  CHECK_FALSE(ViewState::Parse("v2!0!1!!!!!!!~ZZ!").ok());
}
