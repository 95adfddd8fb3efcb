# Counts the training rows and writes them, with the arguments, as the "model".
import argparse
import os

p = argparse.ArgumentParser()
for a in ("training_data", "learning_rate_schedule", "model_output"):
    p.add_argument("--" + a)
p.add_argument("--max_epochs", type=int)
p.add_argument("--learning_rate", type=float)
args = p.parse_args()
rows = sum(len(open(os.path.join(args.training_data, f)).readlines()) - 1 for f in sorted(os.listdir(args.training_data)))
with open(os.path.join(args.model_output, "model.txt"), "w") as f:
    f.write("rows=%d epochs=%d lr=%g schedule=%s\n" % (rows, args.max_epochs, args.learning_rate, args.learning_rate_schedule))
print("trained on %d rows, %d epochs, lr %g, %s" % (rows, args.max_epochs, args.learning_rate, args.learning_rate_schedule))
