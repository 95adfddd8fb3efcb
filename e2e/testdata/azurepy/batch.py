"""Batch endpoints through Azure's own Python SDK (azure-ai-ml 1.4.0)
against a Shoal server: get an endpoint the CLI made, create another,
list them and the deployments, and invoke a deployment on a datastore
folder or data asset (ml_client.batch_endpoints.invoke POSTs to the
endpoint's scoring URI), and stream the job it started to its end.
Prints one JSON line per step."""

import json
import os

from azure.ai.ml import Input, MLClient
from azure.ai.ml.entities import BatchEndpoint
from azure.identity import DefaultAzureCredential

ml_client = MLClient(DefaultAzureCredential(), "00000000-0000-0000-0000-000000000000", "ml-project-rg", "default")
endpoint = os.environ["ENDPOINT"]


def say(step, **values):
    print(json.dumps({"step": step, **values}), flush=True)


ep = ml_client.batch_endpoints.get(endpoint)
say("get", name=ep.name, scoring_uri=ep.scoring_uri, default=ep.defaults.deployment_name if ep.defaults else None)

# 1.4.0's poller answers the REST object (BatchEndpointData); get reads
# it back as an entity.
ml_client.batch_endpoints.begin_create_or_update(BatchEndpoint(name="sdk-made", description="made by the SDK")).result()
made = ml_client.batch_endpoints.get("sdk-made")
say("create", name=made.name, description=made.description)

say("list", names=sorted(e.name for e in ml_client.batch_endpoints.list()))
say("deployments", names=[d.name for d in ml_client.batch_deployments.list(endpoint_name=endpoint)])

job = ml_client.batch_endpoints.invoke(
    endpoint_name=endpoint, deployment_name="torch-dpl",
    input=Input(type="uri_folder", path=os.environ.get("INPUT", "azureml://datastores/workspaceblobstore/paths/digits/")))
say("invoke", name=job.name)

# Followed to its end as Azure's batch notebooks do.
ml_client.jobs.stream(job.name)
say("streamed", name=job.name, status=ml_client.jobs.get(job.name).status)
