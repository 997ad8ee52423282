// accuracy.csv's reader: fractions in [0, 1] (no nan), kinds and flags as written, safe ids.
#include <gtest/gtest.h>

#include "libplan/artifacts/accuracy_csv.h"

namespace zp::artifacts {
namespace {

const std::string kHeader = std::string(kAccuracyCsvHeader) + "\n";

std::string error(const std::string& rows) {
  auto t = parseAccuracyCsv(kHeader + rows, "accuracy.csv");
  return t.ok() ? "" : t.error().message;
}

TEST(artifactsAccuracyCsv, ReadsWhatZooProfileWrites) {
  auto t = parseAccuracyCsv(kHeader + "digits,dense+dense,original,0.9933333333333333,0.99,1\n"
                                      "digits,dense+u50,stitched,,0.9951574206352234,0\n", "accuracy.csv");
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->size(), 2u);
  const auto& a = t->at({"digits", "dense+dense"});
  EXPECT_TRUE(a.original);
  EXPECT_EQ(a.measured, 0.9933333333333333);
  EXPECT_TRUE(a.inTrainingSample);
  const auto& b = t->at({"digits", "dense+u50"});
  EXPECT_FALSE(b.measured);
  EXPECT_EQ(b.predicted, 0.9951574206352234);
}

TEST(artifactsAccuracyCsv, WrittenRowsReadBackInOrderAndRewriteToTheSameBytes) {
  std::vector<AccuracyCsvRow> rows;
  for (int i = 0; i < 50; ++i) {
    AccuracyRow r;
    r.original = i % 7 == 0;
    if (i % 3) r.measured = (i % 10) / 10.0 + 1.0 / 3.0 / 10.0;
    r.predicted = 1.0 / (2 + i);
    r.inTrainingSample = i % 4 == 0;
    rows.push_back(AccuracyCsvRow{i < 25 ? "digits" : "faces", "v" + std::to_string(i % 5) + "+v" + std::to_string(i), r});
  }
  const std::string text = formatAccuracyCsv(rows);
  auto back = parseAccuracyCsvRows(text, "accuracy.csv");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, rows);
  EXPECT_EQ(formatAccuracyCsv(*back), text);
}

TEST(artifactsAccuracyCsv, RejectsWhatItCannotUse) {
  EXPECT_EQ(error("d,a+b,stitched,nan,0.5,0\n"), "accuracy.csv:2: column 'measured_accuracy': 'nan' is not a number in [0, 1]");
  EXPECT_EQ(error("d,a+b,stitched,,inf,0\n"), "accuracy.csv:2: column 'predicted_accuracy': 'inf' is not a number in [0, 1]");
  EXPECT_EQ(error("d,a+b,stitched,1.5,0.5,0\n"), "accuracy.csv:2: column 'measured_accuracy': '1.5' is not a number in [0, 1]");
  EXPECT_EQ(error("d,a+b,stitched,,,0\n"), "accuracy.csv:2: column 'predicted_accuracy': '' is not a number in [0, 1]");
  EXPECT_EQ(error("d,a+b,stitched,,0.5,2\n"), "accuracy.csv:2: column 'in_training_sample': '2' is not 0 or 1");
  EXPECT_EQ(error("d,a+b,merged,,0.5,0\n"), "accuracy.csv:2: column 'kind': 'merged' is not original or stitched");
  EXPECT_EQ(error("d,a+..,stitched,,0.5,0\n"), "accuracy.csv:2: column 'combination': '..' is not a safe id (it names a directory)");
  EXPECT_EQ(error("..,a+b,stitched,,0.5,0\n"), "accuracy.csv:2: column 'task': '..' is not a safe id (it names a directory)");
  EXPECT_EQ(error("d,a+b,stitched,,0.5\n"), "accuracy.csv:2: 5 cells, the header has 6");
  EXPECT_EQ(error("d,a,original,,0.5,0\nd,a,original,,0.5,0\n"), "accuracy.csv:3: a second row for d/a");
  auto bad = parseAccuracyCsv("task,combination\n", "accuracy.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.rfind("accuracy.csv: unexpected header", 0), 0u);
}

}  // namespace
}  // namespace zp::artifacts
