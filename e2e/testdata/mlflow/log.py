# What mlflow.start_run(), log_param, set_tag, log_metric, log_metrics and
# end_run send from inside a job, as MLflow's REST API documentation and
# its client's RestStore shape them: same paths under MLFLOW_TRACKING_URI,
# same methods, JSON bodies and "Authorization: Bearer
# $MLFLOW_TRACKING_TOKEN". No MLflow client is installable here, so the
# requests are made with the standard library.
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

BASE = os.environ["MLFLOW_TRACKING_URI"].rstrip("/") + "/api/2.0/mlflow/"
HEADERS = {"Authorization": "Bearer " + os.environ["MLFLOW_TRACKING_TOKEN"], "Content-Type": "application/json"}
RUN = os.environ["MLFLOW_RUN_ID"]


def call(method, path, body=None):
    url = BASE + path
    data = None
    if method == "GET" and body:
        url += "?" + urllib.parse.urlencode(body)
    elif body is not None:
        data = json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers=HEADERS)
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def ok(method, path, body=None):
    status, out = call(method, path, body)
    if status != 200:
        sys.exit("%s %s: %d %s" % (method, path, status, out))
    return out


now = lambda: int(time.time() * 1000)
# mlflow.set_experiment(os.environ["MLFLOW_EXPERIMENT_NAME"]) / start_run(run_id=...)
exp = ok("GET", "experiments/get-by-name", {"experiment_name": os.environ["MLFLOW_EXPERIMENT_NAME"]})["experiment"]
run = ok("GET", "runs/get", {"run_id": RUN})["run"]
assert run["info"]["experiment_id"] == exp["experiment_id"], (run, exp)
ok("POST", "runs/update", {"run_id": RUN, "run_uuid": RUN, "status": "RUNNING", "run_name": "mnist-lr"})
# mlflow.log_param / set_tag
ok("POST", "runs/log-parameter", {"run_id": RUN, "run_uuid": RUN, "key": "lr", "value": "0.01"})
ok("POST", "runs/set-tag", {"run_id": RUN, "run_uuid": RUN, "key": "stage", "value": "train"})
# mlflow.log_metric per epoch, then mlflow.log_metrics (a batch)
for step, loss in enumerate([0.9, 0.5, 0.25]):
    ok("POST", "runs/log-metric", {"run_id": RUN, "run_uuid": RUN, "key": "loss", "value": loss, "timestamp": now(), "step": step})
ok("POST", "runs/log-batch", {"run_id": RUN, "metrics": [
    {"key": "accuracy", "value": 0.9, "timestamp": now(), "step": 2},
    {"key": "f1", "value": 0.8, "timestamp": now(), "step": 2}], "params": [], "tags": []})
# A parameter is set once: another value is MLflow's INVALID_PARAMETER_VALUE.
status, out = call("POST", "runs/log-parameter", {"run_id": RUN, "run_uuid": RUN, "key": "lr", "value": "0.1"})
assert status == 400 and out.get("error_code") == "INVALID_PARAMETER_VALUE", (status, out)
# Another job's run is out of this token's reach.
status, out = call("POST", "runs/log-metric", {"run_id": "not-" + RUN, "key": "x", "value": 1, "timestamp": now(), "step": 0})
assert status == 403 and out.get("error_code") == "PERMISSION_DENIED", (status, out)
hist = ok("GET", "metrics/get-history", {"run_id": RUN, "metric_key": "loss"})["metrics"]
assert [m["value"] for m in hist] == [0.9, 0.5, 0.25], hist
# mlflow.end_run()
ok("POST", "runs/update", {"run_id": RUN, "run_uuid": RUN, "status": "FINISHED", "end_time": now()})
print("logged", len(hist), "losses to", RUN, "in", exp["name"])
