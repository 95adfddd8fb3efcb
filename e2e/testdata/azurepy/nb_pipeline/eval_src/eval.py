# Prints what the scoring step wrote, and keeps it as the evaluation.
import argparse
import os

p = argparse.ArgumentParser()
for a in ("scoring_result", "eval_output"):
    p.add_argument("--" + a)
args = p.parse_args()
text = open(os.path.join(args.scoring_result, "score.txt")).read()
print("evaluated:", text.strip())
with open(os.path.join(args.eval_output, "eval.txt"), "w") as f:
    f.write(text)
