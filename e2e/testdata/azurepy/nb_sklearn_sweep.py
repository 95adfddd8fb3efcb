"""Azure's notebook sdk/python/jobs/single-step/scikit-learn/
train-hyperparameter-tune-deploy-with-sklearn, cell by cell with
azure-ai-ml 1.4.0 against Shoal. What differs from the notebook: the
endpoint and credential (environment variables), the image (the test
registry's: nothing here reaches mcr.microsoft.com; the jobs run a
second version of the environment without its conda file, as that image
has no conda), the training script
(a stand-in without scikit-learn or the MLflow client, which the test
image lacks; nb_sklearn_src/train_iris.py), 2 trials instead of 12, and
the model's path inside the best trial's artifacts (outputs/..., where a
job's ./outputs is kept, as MLflow's log_model is not served). One JSON
line per step for e2e/azurepy_notebooks_test.go."""
import json
import os
import tempfile

from azure.ai.ml import Input, MLClient, command
from azure.ai.ml.entities import AmlCompute, Environment, Model
from azure.ai.ml.sweep import Choice
from azure.identity import DefaultAzureCredential


def out(step, **kw):
    print(json.dumps({"step": step, **kw}), flush=True)


here = os.path.dirname(os.path.abspath(__file__))
credential = DefaultAzureCredential()
ml_client = MLClient(credential=credential, subscription_id="any-subscription",
                     resource_group_name="any-rg", workspace_name="default")

# The notebook's cluster: created through the SDK when it is not there.
cpu_compute_target = os.environ.get("CLUSTER", "cpu-cluster")
try:
    cpu_cluster = ml_client.compute.get(cpu_compute_target)
    created = False
except Exception:
    cpu_cluster = AmlCompute(name=cpu_compute_target, type="amlcompute", size="STANDARD_DS3_V2",
                             min_instances=0, max_instances=1, idle_time_before_scale_down=180, tier="Dedicated")
    cpu_cluster = ml_client.compute.begin_create_or_update(cpu_cluster).result()
    created = True
out("compute", name=cpu_cluster.name, size=cpu_cluster.size, created=created)

# A registered environment from a conda file and an image.
dependencies_dir = os.path.join(os.getcwd(), "env")
os.makedirs(dependencies_dir, exist_ok=True)
with open(os.path.join(dependencies_dir, "conda.yaml"), "w") as f:
    f.write("name: sklearn-env\nchannels:\n  - conda-forge\ndependencies:\n  - python=3.8\n")
job_env = Environment(name="sklearn-env", description="Custom environment for sklearn image classification",
                      conda_file=os.path.join(dependencies_dir, "conda.yaml"), image=os.environ["IMAGE"])
job_env = ml_client.environments.create_or_update(job_env)
out("environment", name=job_env.name, version=job_env.version)
# The test image has no conda to build that conda file with: the jobs run
# the next version, the image alone.
job_env = ml_client.environments.create_or_update(Environment(name="sklearn-env", image=os.environ["IMAGE"]))
out("environment_image", name=job_env.name, version=job_env.version)

job = command(
    inputs=dict(kernel="linear", penalty=1.0),
    compute=cpu_compute_target,
    environment=f"{job_env.name}:{job_env.version}",
    code=os.path.join(here, "nb_sklearn_src"),
    command="python3 train_iris.py --kernel ${{inputs.kernel}} --penalty ${{inputs.penalty}}",
    experiment_name="sklearn-iris-flowers",
    display_name="sklearn-classify-iris-flower-images",
)
single = ml_client.jobs.create_or_update(job)
out("command", name=single.name, display_name=single.display_name)

job_for_sweep = job(kernel=Choice(values=["linear", "rbf"]), penalty=Choice(values=[1]))
sweep_job = job_for_sweep.sweep(compute=cpu_compute_target, sampling_algorithm="random", primary_metric="Accuracy",
                                goal="Maximize", max_total_trials=2, max_concurrent_trials=1)
returned_sweep_job = ml_client.create_or_update(sweep_job)
try:
    ml_client.jobs.stream(returned_sweep_job.name)
except Exception as e:  # the Go test shows the trials' own words
    out("sweep_failed", error=str(e)[:300],
        trials=[[j.name, j.status] for j in ml_client.jobs.list(parent_job_name=returned_sweep_job.name)])
returned_sweep_job = ml_client.jobs.get(name=returned_sweep_job.name)
out("sweep", name=returned_sweep_job.name, status=returned_sweep_job.status)

# The model of the best trial, registered from its artifacts.
best_run = returned_sweep_job.properties["best_child_run_id"]
model = Model(path="azureml://jobs/{}/outputs/artifacts/paths/outputs/sklearn-iris-flower-classify-model/".format(best_run),
              name="run-model-example", description="Model created from run.", type="custom_model")
registered_model = ml_client.models.create_or_update(model=model)
out("model", best=best_run, name=registered_model.name, version=registered_model.version, path=registered_model.path)

# Beyond the notebook: a job reads the registered model, which must be
# the best trial's files.
reader = ml_client.jobs.create_or_update(command(
    command="cat ${{inputs.model}}/model.txt", compute=cpu_compute_target, environment=f"{job_env.name}:{job_env.version}",
    inputs={"model": Input(type="custom_model", path=f"azureml:{registered_model.name}:{registered_model.version}")}))
ml_client.jobs.stream(reader.name)
out("model_read", name=reader.name, status=ml_client.jobs.get(reader.name).status)

# And the model downloaded, as the deployment cells' local test would.
mdl = tempfile.mkdtemp()
ml_client.models.download(name=registered_model.name, version=registered_model.version, download_path=mdl)
out("model_download", files=sorted(os.path.relpath(os.path.join(r, f), mdl) for r, _, fs in os.walk(mdl) for f in fs))
