"""Azure's notebook sdk/python/jobs/single-step/pytorch/distributed-training/
distributed-cifar10, cell by cell with azure-ai-ml 1.4.0 against Shoal: a
job unpacks the dataset into an output at a long-form datastore URI
(azureml://subscriptions/.../resourcegroups/.../workspaces/.../datastores/
workspaceblobstore/paths/CIFAR-10), and a two-node PyTorch job on
serverless compute reads it, in Azure's curated environment named
azureml:AzureML-acpt-pytorch-2.8-cuda12.6@latest (mapped by the server's
curated_environments). What differs: the endpoint and credential; the
dataset (a small archive of the same layout, uploaded as a local input:
www.cs.toronto.edu is not reachable here); the scripts (stand-ins with
the standard library only, nb_cifar_src/); compute="serverless" written
out (azure-ai-ml 1.4 refuses a job without compute) and a CPU size for
the serverless pool instead of a T4's. One JSON line per step for
e2e/azurepy_notebooks_test.go."""
import json
import os

from azure.ai.ml import Input, MLClient, Output, command
from azure.ai.ml.constants import AssetTypes
from azure.ai.ml.entities import ResourceConfiguration
from azure.identity import DefaultAzureCredential


def out(step, **kw):
    print(json.dumps({"step": step, **kw}), flush=True)


here = os.path.dirname(os.path.abspath(__file__))
ml_client = MLClient(DefaultAzureCredential(), "any-subscription", "any-rg", "default")
workspace = ml_client.workspace_name
subscription_id = ml_client.workspaces.get(workspace).id.split("/")[2]
resource_group = ml_client.workspaces.get(workspace).resource_group

inputs = {"cifar_zip": Input(type=AssetTypes.URI_FILE, path=os.path.join(here, "nb_cifar_data.tar.gz"))}
outputs = {"cifar": Output(type=AssetTypes.URI_FOLDER,
                           path=f"azureml://subscriptions/{subscription_id}/resourcegroups/{resource_group}/workspaces/{workspace}/datastores/workspaceblobstore/paths/CIFAR-10")}
job = command(code=os.path.join(here, "nb_cifar_src"),
              command="python3 read_write_data.py --input_data ${{inputs.cifar_zip}} --output_folder ${{outputs.cifar}}",
              inputs=inputs, outputs=outputs,
              environment="azureml://registries/azureml/environments/sklearn-1.5/labels/latest", compute="serverless")
returned_job = ml_client.jobs.create_or_update(job)
ml_client.jobs.stream(returned_job.name)
out("prepared", name=returned_job.name, status=ml_client.jobs.get(returned_job.name).status,
    path=returned_job.outputs.cifar.path)

inputs = {
    "cifar": Input(type=AssetTypes.URI_FOLDER, path=returned_job.outputs.cifar.path),
    "epoch": 10, "batchsize": 64, "workers": 2, "lr": 0.01, "momen": 0.9, "prtfreq": 200, "output": "./outputs",
}
job = command(
    code=os.path.join(here, "nb_cifar_src"),
    command="python3 train.py --data-dir ${{inputs.cifar}} --epochs ${{inputs.epoch}} --batch-size ${{inputs.batchsize}} "
            "--workers ${{inputs.workers}} --learning-rate ${{inputs.lr}} --momentum ${{inputs.momen}} "
            "--print-freq ${{inputs.prtfreq}} --model-dir ${{inputs.output}}",
    inputs=inputs,
    environment="azureml:AzureML-acpt-pytorch-2.8-cuda12.6@latest",
    instance_count=2,
    distribution={"type": "PyTorch", "process_count_per_instance": 1},
    compute="serverless",
)
job.resources = ResourceConfiguration(instance_type="Standard_DS3_v2", instance_count=2)
trained = ml_client.jobs.create_or_update(job)
ml_client.jobs.stream(trained.name)
got = ml_client.jobs.get(trained.name)
out("trained", name=trained.name, status=got.status, compute=str(got.compute))
