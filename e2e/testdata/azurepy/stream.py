"""Following jobs with Azure's own SDK (azure-ai-ml 1.4.0 from Debian's
python3-azure) against a Shoal server, as a notebook does after submitting:
the job names come in argv (submitted by the Go test with `shoal job
create`). Connection as in seeds.py (AZUREML_DEV_URL_MFE, the CA bundle,
a service principal in AZURE_*).

Each job waits, on the host, for a gate file GATE_DIR/<job> before it
prints: the gate opens once the SDK has read the run's details the first
time, so that the job is in progress when streaming starts (azure-ai-ml
prints a job's logs only while it polls a run in progress, as on Azure).
The SDK's run history client is handed over whole, wrapped only to open
the gate after its first answer.

Part "history" calls the SDK's own streaming (stream_logs_until_completion,
what jobs.stream calls) with the job as ARM's GET jobs/{id} would describe
it: it needs only the workspace's discoveryUrl, the discovery document and
run history. Part "arm" calls ml_client.jobs.stream(name) itself, which
first reads ARM's GET jobs/{id}; where the server has no such route yet it
says so ("skipped") and the Go test decides whether that is allowed.

Prints one JSON line per step."""

import contextlib
import io
import json
import os
import sys

from azure.ai.ml import MLClient
from azure.ai.ml._restclient.v2022_10_01_preview.models import CommandJob, JobBase, JobService
from azure.ai.ml.operations._job_ops_helper import stream_logs_until_completion
from azure.core.exceptions import HttpResponseError
from azure.identity import DefaultAzureCredential

ml_client = MLClient(DefaultAzureCredential(), "00000000-0000-0000-0000-000000000000", "ml-project-rg", "default")
gate_dir = os.environ["GATE_DIR"]


def say(step, **values):
    print(json.dumps({"step": step, **values}), flush=True)


class Gated:
    """The SDK's run operations, opening a job's gate after the first
    read of its details."""

    def __init__(self, runs):
        self._runs = runs

    def get_run_details(self, run_id):
        details = self._runs.get_run_details(run_id)
        gate = os.path.join(gate_dir, run_id)
        if not os.path.exists(gate):
            open(gate, "w").close()
        return details

    def __getattr__(self, name):
        return getattr(self._runs, name)


def follow(step, call):
    """Runs call, capturing what it prints; the exception it raises, if
    any, in words."""
    out, error = io.StringIO(), None
    with contextlib.redirect_stdout(out):
        try:
            call()
        except Exception as e:  # pylint: disable=broad-except
            error = "%s: %s" % (type(e).__name__, e)
    say(step, output=out.getvalue(), error=error)


runs = ml_client.jobs._runs_operations  # discovery, then the run history client
say("discovery", api=ml_client.jobs._api_url)

for name in sys.argv[1:3]:
    details = runs.get_run_details(name)
    say("details", name=name, status=details.status, logs=sorted(details.log_files))
    resource = JobBase(properties=CommandJob(command="(as submitted)", environment_id="(as submitted)",
                                             services={"Studio": JobService(endpoint="studio/" + name)}))
    resource.name = name
    follow("history:" + name, lambda: stream_logs_until_completion(
        Gated(runs), resource, None, requests_pipeline=ml_client.jobs._requests_pipeline))

if len(sys.argv) > 3:
    name = sys.argv[3]
    ml_client.jobs._runs_operations_client = Gated(runs)
    try:
        ml_client.jobs.get(name)
    except HttpResponseError as e:
        if "no such route" not in str(e):
            raise
        say("arm:" + name, skipped="ARM's GET jobs/{id}: " + str(e).splitlines()[0])
        open(os.path.join(gate_dir, name), "w").close()
    else:
        follow("arm:" + name, lambda: ml_client.jobs.stream(name))
