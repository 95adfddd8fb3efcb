# Stand-in for the notebook's train_iris.py (scikit-learn's SVC on iris,
# logged with MLflow): the test image has Python's standard library only.
# It takes the same arguments, logs the metric "Accuracy" through MLflow's
# REST API (what mlflow.log_metric sends) and saves its "model" under
# ./outputs, where the run's artifacts are kept, so that the best trial
# and the model registered from it are known.
import argparse
import json
import os
import time
import urllib.request

parser = argparse.ArgumentParser()
parser.add_argument("--kernel", type=str, default="linear")
parser.add_argument("--penalty", type=float, default=1.0)
args = parser.parse_args()
accuracy = {"linear": 0.97, "rbf": 0.89}.get(args.kernel, 0.5) * min(args.penalty, 1.0)
body = {"run_id": os.environ["MLFLOW_RUN_ID"], "key": "Accuracy", "value": accuracy,
        "timestamp": int(time.time() * 1000), "step": 0}
req = urllib.request.Request(os.environ["MLFLOW_TRACKING_URI"].rstrip("/") + "/api/2.0/mlflow/runs/log-metric",
                             data=json.dumps(body).encode(), method="POST",
                             headers={"Authorization": "Bearer " + os.environ["MLFLOW_TRACKING_TOKEN"],
                                      "Content-Type": "application/json"})
urllib.request.urlopen(req).read()
model = os.path.join("outputs", "sklearn-iris-flower-classify-model")
os.makedirs(model, exist_ok=True)
with open(os.path.join(model, "model.txt"), "w") as f:
    f.write("SVC kernel=%s C=%g\n" % (args.kernel, args.penalty))
print("Accuracy of SVM classifier on test set: {:.2f}".format(accuracy))
