#include <gtest/gtest.h>

#include "libplan/runtime/serve/residency.h"
#include "tests/runtime/serve/test_models.h"

namespace zp::runtime::serve {
namespace {

// Four one-layer slots of 100 "bytes" each (the planner's count); slot 0 preloaded.
struct Fixture {
  std::vector<ServeSlot> slots;
  testing::InMemoryLoader loader;
  Fixture()
      : slots({{"s0", 0, 100, true}, {"s1", 0, 100, false}, {"s2", 0, 100, false}, {"s3", 0, 100, false}}),
        loader(std::vector<std::string>(4, testing::chainText("x", "y", 1, 8, 1, 0.1f))) {}
  std::function<Expected<LoadedSubgraph>()> load(int slot) {
    return [this, slot] { return loader.load(slot, slots[static_cast<size_t>(slot)], {}); };
  }
};

TEST(Residency, PreloadSetMustFitTheBudget) {
  Fixture f;
  EXPECT_FALSE(ResidencyManager::create(f.slots, 99).ok());
  EXPECT_TRUE(ResidencyManager::create(f.slots, 100).ok());
}

TEST(Residency, LeastRecentlyUsedNonPreloadedSlotIsEvicted) {
  Fixture f;
  auto m = ResidencyManager::create(f.slots, 300).value();
  auto pre = f.loader.load(0, f.slots[0], {});
  m->installPreloaded(0, std::move(pre).value());
  auto use = [&](int slot) {
    auto lease = m->acquire(slot, f.load(slot));
    EXPECT_TRUE(lease.ok());
    m->release(slot);
    return std::move(lease).value();
  };
  auto l1 = use(1);
  EXPECT_TRUE(l1.loaded);
  EXPECT_GT(l1.loadMs, 0);
  auto l2 = use(2);
  EXPECT_TRUE(l2.evicted.empty());  // 0 + 1 + 2 = 300 fits
  EXPECT_FALSE(use(0).loaded);      // preloaded: resident, no load
  EXPECT_FALSE(use(1).loaded);      // 1 is now more recent than 2
  auto l3 = use(3);
  EXPECT_EQ(l3.evicted, std::vector<int>{2});
  auto l2b = use(2);
  EXPECT_EQ(l2b.evicted, std::vector<int>{1});
  EXPECT_EQ(m->loads(), 4);
  EXPECT_EQ(m->evictions(), 2);
  EXPECT_EQ(m->peakResidentBytes(), 300);
  EXPECT_EQ(f.loader.loads(0), 1);  // the preloaded slot is never loaded again
  EXPECT_EQ(m->overBudgetLoads(), 0);
}

TEST(Residency, SlotsInUseAreNotEvictedAndAnOverrunIsCounted) {
  Fixture f;
  auto m = ResidencyManager::create(f.slots, 200).value();
  m->installPreloaded(0, std::move(f.loader.load(0, f.slots[0], {})).value());
  auto held = m->acquire(1, f.load(1));  // in use until released
  ASSERT_TRUE(held.ok());
  auto l2 = m->acquire(2, f.load(2));
  ASSERT_TRUE(l2.ok());
  EXPECT_TRUE(l2->evicted.empty());
  EXPECT_TRUE(l2->overBudget);
  EXPECT_EQ(m->overBudgetLoads(), 1);
  EXPECT_EQ(m->residentBytes(), 300);
  // Once slot 1's run ends the budget is back: 1, the least recently used, goes.
  m->release(1);
  EXPECT_EQ(m->residentBytes(), 200);
  EXPECT_EQ(m->evictions(), 1);
  m->release(2);
  EXPECT_EQ(m->residentBytes(), 200);
  auto l3 = m->acquire(3, f.load(3));
  ASSERT_TRUE(l3.ok());
  EXPECT_EQ(l3->evicted, (std::vector<int>{2}));
  m->release(3);
  EXPECT_EQ(m->evictions(), 2);
}

TEST(Residency, AnOverBudgetLoadIsDroppedWhenItsRunEnds) {
  // Preloaded slot 0 (100) leaves 50 bytes: slot 1 (100) only loads over the budget,
  // and so every time it is needed, not once.
  Fixture f;
  auto m = ResidencyManager::create(f.slots, 150).value();
  m->installPreloaded(0, std::move(f.loader.load(0, f.slots[0], {})).value());
  for (int i = 0; i < 3; ++i) {
    auto l = m->acquire(1, f.load(1));
    ASSERT_TRUE(l.ok());
    EXPECT_TRUE(l->loaded && l->overBudget);
    m->release(1);
    EXPECT_EQ(m->residentBytes(), 100);
  }
  EXPECT_EQ(m->loads(), 3);
  EXPECT_EQ(m->overBudgetLoads(), 3);
  EXPECT_EQ(m->evictions(), 3);
  EXPECT_EQ(f.loader.loads(1), 3);
}

TEST(Residency, ALoadErrorIsReturned) {
  Fixture f;
  auto m = ResidencyManager::create(f.slots, 400).value();
  auto l = m->acquire(1, [] { return Expected<LoadedSubgraph>(makeError("s1.onnx: truncated")); });
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.error().message, "s1.onnx: truncated");
}

}  // namespace
}  // namespace zp::runtime::serve
