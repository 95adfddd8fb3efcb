"""A running job's services through Azure's own Python SDK (azure-ai-ml
1.4.0): jobs.show_services(name, node_index), which reads run history's
serviceinstances, and the services of jobs.get. The job (named by JOB)
was submitted with Shoal's CLI; only where the client connects differs
from Azure. Prints one JSON line per step."""

import json
import os

from azure.ai.ml import MLClient
from azure.identity import DefaultAzureCredential

ml_client = MLClient(DefaultAzureCredential(), "00000000-0000-0000-0000-000000000000", "ml-project-rg", "default")
name = os.environ["JOB"]


def say(step, **values):
    print(json.dumps({"step": step, **values}), flush=True)


shown = ml_client.jobs.show_services(name, 0)
say("show", services={k: {"type": v.type, "status": v.status, "endpoint": v.endpoint, "port": v.port, "error": v.error}
                      for k, v in (shown or {}).items()})
say("node1", services=sorted(ml_client.jobs.show_services(name, 1) or {}))
got = ml_client.jobs.get(name)
say("get", services={k: {"type": v.job_service_type, "status": v.status, "endpoint": v.endpoint, "port": v.port}
                     for k, v in (got.services or {}).items()})
