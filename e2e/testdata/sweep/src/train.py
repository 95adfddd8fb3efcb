# A sweep's trial: "trains" for a few epochs and logs its accuracy after
# each one, as mlflow.log_metric("accuracy", acc, step=epoch) would, with
# requests shaped as MLflow's REST API documentation and its client's
# RestStore give them (POST runs/log-metric under MLFLOW_TRACKING_URI with
# "Authorization: Bearer $MLFLOW_TRACKING_TOKEN"). No MLflow client is
# installable here, so the request is made with the standard library.
#
# The accuracy is a deterministic function of the learning rate, so that
# the test knows which trials are good: 0.95 at lr 0.01, a little less
# within a decade of it (never below 0.90), and falling fast outside, so
# that bandit early termination cancels those. Each epoch the accuracy
# climbs towards that final value, by the same factor for every trial, so
# trials compare at an interval as they do at the end.
import argparse
import json
import math
import os
import sys
import time
import urllib.request

EPOCHS = 6

p = argparse.ArgumentParser()
p.add_argument("--lr", type=float, required=True)
p.add_argument("--batch", type=int, required=True)
p.add_argument("--momentum", type=float, required=True)
p.add_argument("--pause", type=float, default=0.6)
args = p.parse_args()

d = abs(math.log10(args.lr) + 2)
final = 0.95 - 0.05 * d - 0.3 * max(0.0, d - 1)

base = os.environ["MLFLOW_TRACKING_URI"].rstrip("/") + "/api/2.0/mlflow/"
headers = {"Authorization": "Bearer " + os.environ["MLFLOW_TRACKING_TOKEN"], "Content-Type": "application/json"}
run = os.environ["MLFLOW_RUN_ID"]


def log_metric(key, value, step):
    body = {"run_id": run, "run_uuid": run, "key": key, "value": value, "timestamp": int(time.time() * 1000), "step": step}
    req = urllib.request.Request(base + "runs/log-metric", data=json.dumps(body).encode(), method="POST", headers=headers)
    with urllib.request.urlopen(req) as r:
        if r.status != 200:
            sys.exit("log-metric: HTTP %d" % r.status)


print("lr %g batch %d momentum %g: final accuracy %.4f" % (args.lr, args.batch, args.momentum, final), flush=True)
for epoch in range(1, EPOCHS + 1):
    time.sleep(args.pause)
    acc = final * (0.7 + 0.3 * epoch / EPOCHS)
    log_metric("accuracy", acc, epoch)
    print("epoch %d accuracy %.4f" % (epoch, acc), flush=True)
print("done", flush=True)
