# Stand-in for the notebook's distributed PyTorch training (no PyTorch in
# the test image): each process says which rank it is of how many, as
# torch.distributed would read them from the environment, and what it
# found in the data folder the first job wrote.
import argparse
import os

parser = argparse.ArgumentParser()
parser.add_argument("--data-dir", type=str)
parser.add_argument("--epochs", type=int)
parser.add_argument("--model-dir", type=str)
args, _ = parser.parse_known_args()
found = sorted(os.path.relpath(os.path.join(r, f), args.data_dir) for r, _, fs in os.walk(args.data_dir) for f in fs)
print("rank %s of %s (master %s) epochs %d found %s" % (
    os.environ.get("RANK"), os.environ.get("WORLD_SIZE"), os.environ.get("MASTER_ADDR") is not None, args.epochs, ",".join(found)))
