# Stand-in for the tutorial's main.py (a GradientBoostingClassifier on the
# credit card defaults, logged with MLflow): the test image has Python's
# standard library only. It takes the same arguments, reads the same CSV
# (two header rows, as the original file has) and splits it as the
# tutorial does, printing what the tutorial's script prints first.
import argparse
import csv

parser = argparse.ArgumentParser()
parser.add_argument("--data", type=str)
parser.add_argument("--test_train_ratio", type=float, default=0.25)
parser.add_argument("--n_estimators", type=int, default=100)
parser.add_argument("--learning_rate", type=float, default=0.1)
parser.add_argument("--registered_model_name", type=str)
args = parser.parse_args()
print(" ".join(f"{k}={v}" for k, v in vars(args).items()))
print("input data:", args.data)
with open(args.data, newline="") as f:
    rows = list(csv.reader(f))[1:]
header, body = rows[0], rows[1:]
label = header.index("default payment next month")
test = int(len(body) * args.test_train_ratio)
print(f"Training with data of shape ({len(body) - test}, {len(header) - 2})")
