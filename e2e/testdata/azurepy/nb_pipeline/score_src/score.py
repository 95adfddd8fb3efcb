# Scores the test folder with the "model": one line naming both.
import argparse
import os

p = argparse.ArgumentParser()
for a in ("model_input", "test_data", "score_output"):
    p.add_argument("--" + a)
args = p.parse_args()
model = open(os.path.join(args.model_input, "model.txt")).read().strip()
tests = sorted(os.listdir(args.test_data))
with open(os.path.join(args.score_output, "score.txt"), "w") as f:
    f.write("%s scored %s\n" % (model, ",".join(tests)))
print("scored", tests)
