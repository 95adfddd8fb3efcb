"""The notebook-style flow of Azure ML users (docs/guides/azure-sdks.md),
with azure-ai-ml 1.4.0 against Shoal: a command() job with local code and
an inline image environment, streamed until it completes, read, listed
and downloaded; a data asset registered from a local file; a two-step
@dsl.pipeline passing a folder; a .sweep() with early termination; a job
cancelled. Only the endpoint and the credential differ from Azure. One
JSON line per step for the Go test (e2e/azurepy_notebook_test.go); the
streamed logs are printed between them, as jobs.stream prints them."""
import json
import os
import tempfile

from azure.ai.ml import Input, MLClient, Output, command, dsl
from azure.ai.ml.entities import Data, Environment
from azure.ai.ml.sweep import BanditPolicy, Choice
from azure.identity import DefaultAzureCredential


def out(step, **kw):
    print(json.dumps({"step": step, **kw}), flush=True)


ml_client = MLClient(DefaultAzureCredential(), "any-subscription", "any-rg", "default")
here = os.path.dirname(os.path.abspath(__file__))
src = os.path.join(here, "notebook_src")
cluster = os.environ["CLUSTER"]
env = Environment(image=os.environ["IMAGE"])

# A command job with local code and an inline image environment.
job = command(code=src, command="cat hello.txt && echo lr=${{inputs.lr}} && echo kept > ./outputs/result.txt",
              inputs={"lr": 0.1}, environment=env, compute=cluster, experiment_name="notebook")
returned = ml_client.jobs.create_or_update(job)
out("submitted", name=returned.name, studio=bool(returned.services and returned.services.get("Studio")))
ml_client.jobs.stream(returned.name)
got = ml_client.jobs.get(returned.name)
out("completed", status=got.status, code=str(got.code))
out("listed", found=returned.name in [j.name for j in ml_client.jobs.list()])
dl = tempfile.mkdtemp()
ml_client.jobs.download(returned.name, download_path=dl, all=True)
files = sorted(os.path.relpath(os.path.join(r, f), dl) for r, _, fs in os.walk(dl) for f in fs)
kept = [f for f in files if f.endswith("result.txt")]
out("downloaded", files=files, result=open(os.path.join(dl, kept[0])).read().strip() if kept else None)

# A data asset from a local file: uploaded to workspaceblobstore.
data = ml_client.data.create_or_update(Data(name="nb-iris", version="1", type="uri_file",
                                            path=os.path.join(here, "notebook_data", "iris.csv")))
out("data", name=data.name, version=data.version, path=data.path)

# A two-step pipeline passing a folder; the second step reads the asset.
prep = command(code=src, command="cp hello.txt ${{outputs.folder}}/passed.txt",
               environment=env, outputs={"folder": Output(type="uri_folder")})
use = command(command="cat ${{inputs.folder}}/passed.txt && head -1 ${{inputs.iris}}",
              environment=env, inputs={"folder": Input(type="uri_folder"), "iris": Input(type="uri_file")})


@dsl.pipeline(compute=cluster, description="two steps from a notebook")
def two_steps():
    first = prep()
    second = use(folder=first.outputs.folder, iris=Input(type="uri_file", path="azureml:nb-iris:1"))  # noqa: F841
    return {"passed": first.outputs.folder}


pipe = ml_client.jobs.create_or_update(two_steps(), experiment_name="notebook")
try:
    ml_client.jobs.stream(pipe.name)
except Exception as e:  # the Go test shows the steps' own words
    out("pipeline_failed", error=str(e)[:500])
out("pipeline", name=pipe.name, status=ml_client.jobs.get(pipe.name).status,
    steps=sorted([j.name, j.display_name or ""] for j in ml_client.jobs.list(parent_job_name=pipe.name)))
# A step read back: its code is the code version the SDK uploaded.
out("pipeline_step", code_version="/codes/" in str(ml_client.jobs.get(pipe.name + "-first").code))
# The pipeline's named output, downloaded as Azure lays it out.
pdl = tempfile.mkdtemp()
ml_client.jobs.download(pipe.name, download_path=pdl, output_name="passed")
passed = os.path.join(pdl, "named-outputs", "passed", "passed.txt")
out("pipeline_download", passed=open(passed).read().strip() if os.path.exists(passed) else None,
    files=sorted(os.path.relpath(os.path.join(r, f), pdl) for r, _, fs in os.walk(pdl) for f in fs))

# A sweep with early termination.
trial = command(code=src, command="python3 trial.py ${{inputs.lr}}", inputs={"lr": 0.1}, environment=env, compute=cluster)
sweep = trial(lr=Choice([0.01, 0.1])).sweep(compute=cluster, sampling_algorithm="grid", primary_metric="acc",
                                            goal="Maximize",
                                            early_termination_policy=BanditPolicy(slack_factor=0.1, evaluation_interval=1))
sweep.set_limits(max_total_trials=2, max_concurrent_trials=1)
swept = ml_client.jobs.create_or_update(sweep, experiment_name="notebook")
ml_client.jobs.stream(swept.name)
out("sweep", name=swept.name, status=ml_client.jobs.get(swept.name).status,
    trials=len(list(ml_client.jobs.list(parent_job_name=swept.name))))
# The sweep downloaded: the best trial's (highest acc) outputs.
sdl = tempfile.mkdtemp()
ml_client.jobs.download(swept.name, download_path=sdl, all=True)
best_lr = os.path.join(sdl, "artifacts", "outputs", "lr.txt")
out("sweep_download", best=ml_client.jobs.get(swept.name).properties.get("best_child_run_id", ""),
    lr=open(best_lr).read().strip() if os.path.exists(best_lr) else None)

# A .sweep() node inside a @dsl.pipeline: a pipeline's sweep step.
@dsl.pipeline(compute=cluster, description="a sweep step from a notebook")
def tuned():
    tune = trial(lr=Choice([0.01, 0.1])).sweep(sampling_algorithm="grid", primary_metric="acc", goal="Maximize")
    tune.set_limits(max_total_trials=2, max_concurrent_trials=1)


tp = ml_client.jobs.create_or_update(tuned(), experiment_name="notebook")
ml_client.jobs.stream(tp.name)
tuned_steps = list(ml_client.jobs.list(parent_job_name=tp.name))
out("pipeline_sweep", status=ml_client.jobs.get(tp.name).status,
    sweeps=[j.type for j in tuned_steps])

# A job cancelled through the SDK.
long = ml_client.jobs.create_or_update(command(command="sleep 600", environment=env, compute=cluster))
ml_client.jobs.begin_cancel(long.name).wait()
out("cancel", name=long.name, status=ml_client.jobs.get(long.name).status)
