# A sweep trial from the notebook: logs its learning rate as the metric
# "acc" through MLflow's REST API (what mlflow.log_metric sends; no MLflow
# client in the test image) and keeps it in ./outputs, so that the sweep's
# best trial, and what jobs.download brings back of it, are known.
import json
import os
import sys
import time
import urllib.request

lr = float(sys.argv[1])
body = {"run_id": os.environ["MLFLOW_RUN_ID"], "key": "acc", "value": lr, "timestamp": int(time.time() * 1000), "step": 0}
req = urllib.request.Request(os.environ["MLFLOW_TRACKING_URI"].rstrip("/") + "/api/2.0/mlflow/runs/log-metric",
                             data=json.dumps(body).encode(), method="POST",
                             headers={"Authorization": "Bearer " + os.environ["MLFLOW_TRACKING_TOKEN"],
                                      "Content-Type": "application/json"})
urllib.request.urlopen(req).read()
os.makedirs("outputs", exist_ok=True)
with open(os.path.join("outputs", "lr.txt"), "w") as f:
    f.write("%g\n" % lr)
print("trial lr=%g" % lr)
