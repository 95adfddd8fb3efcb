"""Jobs through Azure's own Python SDK (azure-ai-ml 1.4.0 from Debian's
python3-azure) against a Shoal server, as a notebook submits them: a
command() with an inline Environment(image=...), one with a registered
environment, get, list, cancel, and a .sweep(). Only where the client connects differs
(AZUREML_DEV_URL_MFE, REQUESTS_CA_BUNDLE, a Shoal service principal in
AZURE_*). The cluster's one node is busy with another job, so that these
stay queued: the test reads what Shoal stored, and cancels one. Prints
one JSON line per step."""

import json
import os

from azure.ai.ml import MLClient, command
from azure.ai.ml.entities import Environment
from azure.ai.ml.sweep import BanditPolicy, Choice, Uniform
from azure.identity import DefaultAzureCredential

ml_client = MLClient(DefaultAzureCredential(), "00000000-0000-0000-0000-000000000000", "ml-project-rg", "default")
cluster = os.environ["CLUSTER"]


def say(step, **values):
    print(json.dumps({"step": step, **values}), flush=True)


# A command() with an inline image: the SDK registers an anonymous
# environment (isAnonymous: true), then PUTs the job.
job = command(command="echo hello ${{inputs.greeting}}", inputs={"greeting": "world"},
              environment=Environment(image="python:3.11-slim"), compute=cluster,
              display_name="hello-sdk", experiment_name="sdk-jobs", tags={"from": "sdk"})
returned = ml_client.jobs.create_or_update(job)
say("inline", name=returned.name, status=returned.status, compute=returned.compute,
    environment=str(returned.environment), studio=returned.services["Studio"].endpoint,
    display_name=returned.display_name)

# An update as notebooks make it: the job as get answers it, with a tag
# and a description changed, sent back (Azure updates those fields).
upd = ml_client.jobs.get(returned.name)
upd.tags["reviewed"] = "yes"
upd.description = "checked"
upd = ml_client.jobs.create_or_update(upd)
say("update", name=upd.name, tags=upd.tags, description=upd.description)

# A registered environment, named as notebooks do.
ml_client.environments.create_or_update(Environment(name="sdk-job-env", version="1", image="python:3.11"))
second = ml_client.jobs.create_or_update(command(command="python -c 'print(1)'", environment="sdk-job-env:1",
                                                 compute=cluster, experiment_name="sdk-jobs"))
got = ml_client.jobs.get(second.name)
say("registered", name=got.name, status=got.status, environment=str(got.environment), type=got.type)

say("list", names=sorted(j.name for j in ml_client.jobs.list()))

ml_client.jobs.begin_cancel(second.name).wait()
say("cancel", name=second.name, status=ml_client.jobs.get(second.name).status)

# A .sweep() of a command with early termination.
trial = command(command="echo ${{inputs.lr}} ${{inputs.layers}}", inputs={"lr": 0.1, "layers": 2},
                environment="sdk-job-env:1", compute=cluster)
sweep_job = trial(lr=Uniform(0.01, 0.1), layers=Choice([2, 3])).sweep(
    compute=cluster, sampling_algorithm="random", primary_metric="acc", goal="Maximize",
    early_termination_policy=BanditPolicy(slack_factor=0.1, evaluation_interval=1))
sweep_job.set_limits(max_total_trials=2, max_concurrent_trials=1)
sweep_job.experiment_name = "sdk-jobs"
s = ml_client.jobs.create_or_update(sweep_job)
say("sweep", name=s.name, type=s.type, status=s.status, metric=s.objective.primary_metric)

got = ml_client.jobs.get(s.name)
say("sweep_get", type=got.type, space=sorted(got.search_space), sampling=got.sampling_algorithm.type if hasattr(got.sampling_algorithm, "type") else str(got.sampling_algorithm))

# A pipeline the CLI submitted, read back as the SDK's PipelineJob.
pj = ml_client.jobs.get(os.environ["PIPELINE"])
say("pipeline_get", type=pj.type, steps=sorted(pj.jobs), status=pj.status, compute=pj.settings.default_compute)
say("list_all", names=sorted(j.name for j in ml_client.jobs.list()))
# A @dsl.pipeline is not submitted here: azure-ai-ml uploads a placeholder
# code folder for each command component without code, which needs the
# server's code assets (the codes routes and the blob upload); the REST
# body it then sends is tested in api's TestARMJobs (arm/testdata/jobs).
