// The Workspace's arena (src/extract/impl/arena.hpp) on TEST_EXECSPACE's memory: the two passes
// cut the same Views, each where the one before ends, on 256-byte boundaries; what a kernel writes
// through each View is what reads back; a cut past the measure is an error.
#include "extract/impl/arena.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>

namespace {

using ArenaMem = TEST_EXECSPACE::memory_space;
using kspecter::extract::detail::Arena;
using D2 = Kokkos::View<double**, Kokkos::LayoutRight, ArenaMem>;
using I1 = Kokkos::View<int*, ArenaMem>;

struct Cuts {
  D2 a;
  I1 b;
  D2 c;
  template <class A>
  void cut(A& arena) {
    TEST_EXECSPACE space;
    a = arena.template take<D2>(space, "a", 3, 5);   // 120 bytes
    b = arena.template take<I1>(space, "b", 7);      // 28 bytes
    c = arena.template take<D2>(space, "c", 40, 9);  // 2880 bytes
  }
};

TEST(TEST_CATEGORY, arena_cuts_views_apart_and_aligned_from_one_block) {
  TEST_EXECSPACE space;
  Cuts m;
  Arena<ArenaMem> measure = Arena<ArenaMem>::measure();
  m.cut(measure);
  EXPECT_EQ(measure.bytes(), 256u + 256u + 3072u);  // each cut rounded up to 256 bytes
  EXPECT_EQ(m.c.extent(0), 40u);
  EXPECT_EQ(m.c.extent(1), 9u);

  Arena<ArenaMem> arena =
      Arena<ArenaMem>::cut_from(space, "kspecter::test::arena", measure.bytes());
  EXPECT_EQ(arena.bytes(), measure.bytes());
  Cuts v;
  v.cut(arena);
  auto const at = [](auto const& x) { return reinterpret_cast<std::uintptr_t>(x.data()); };
  EXPECT_EQ(at(v.b) - at(v.a), 256u);
  EXPECT_EQ(at(v.c) - at(v.b), 256u);
  EXPECT_EQ(at(v.a) % 256, 0u);
  for (auto p : {at(v.a), at(v.b), at(v.c)}) EXPECT_TRUE(arena.holds(reinterpret_cast<void*>(p)));
  EXPECT_FALSE(arena.holds(reinterpret_cast<void*>(at(v.a) + arena.bytes())));
  EXPECT_FALSE(arena.holds(reinterpret_cast<void*>(at(v.a) - 1)));
  int x = 0;
  EXPECT_FALSE(arena.holds(&x));

  // Each View written whole through its own indices; none overwrites another.
  D2 const a = v.a, c = v.c;
  I1 const b = v.b;
  Kokkos::parallel_for(
      "kspecter::test::arena_fill", Kokkos::RangePolicy<TEST_EXECSPACE>(space, 0, 360),
      KOKKOS_LAMBDA(int i) {
        if (i < 15) a(i / 5, i % 5) = 1000.0 + i;
        if (i < 7) b(i) = -i;
        c(i / 9, i % 9) = 0.5 * i;
      });
  auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v.a);
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v.b);
  auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v.c);
  for (int i = 0; i < 15; ++i) EXPECT_EQ(ha(i / 5, i % 5), 1000.0 + i);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(hb(i), -i);
  for (int i = 0; i < 360; ++i) EXPECT_EQ(hc(i / 9, i % 9), 0.5 * i);

  // A cut the measure did not see.
  EXPECT_THROW((void)arena.template take<I1>(space, "d", 1), std::logic_error);
}

TEST(TEST_CATEGORY, arena_off_allocates_each_view_on_its_own) {
  Arena<ArenaMem> off = Arena<ArenaMem>::off();
  Cuts v;
  v.cut(off);
  EXPECT_EQ(off.bytes(), 0u);
  EXPECT_FALSE(off.holds(v.a.data()));
  EXPECT_EQ(v.c.label(), "c");  // a View of its own, with its label
  EXPECT_EQ(v.c.use_count(), 1);
}

}  // namespace
