"""A @dsl.pipeline with a parallel_run_function step, with azure-ai-ml
1.4.0 against Shoal (docs/reference/parallel-job-yaml.md): the SDK
uploads the task's code, registers the anonymous parallel component and
submits the pipeline through the ARM routes; the pipeline reads back
with its parallel step. The run itself is the driver's and the ledger's,
tested with them. One JSON line per step for the Go test
(e2e/azurepy_parallel_test.go)."""
import json
import os

from azure.ai.ml import Input, MLClient, Output, dsl
from azure.ai.ml.entities import Environment
from azure.ai.ml.parallel import RunFunction, parallel_run_function
from azure.identity import DefaultAzureCredential


def out(step, **kw):
    print(json.dumps({"step": step, **kw}), flush=True)


ml_client = MLClient(DefaultAzureCredential(), "any-subscription", "any-rg", "default")
here = os.path.dirname(os.path.abspath(__file__))
cluster = os.environ["CLUSTER"]

score = parallel_run_function(
    name="sdk_score", inputs={"data": Input(type="uri_folder")}, outputs={"rows": Output(type="uri_file")},
    input_data="${{inputs.data}}", instance_count=2, max_concurrency_per_instance=2, mini_batch_size="2",
    retry_settings=dict(max_retries=1, timeout=30), logging_level="INFO",
    task=RunFunction(code=os.path.join(here, "parallel_src"), entry_script="score.py",
                     environment=Environment(image=os.environ["IMAGE"]), append_row_to="${{outputs.rows}}"))


@dsl.pipeline(compute=cluster, description="a parallel step from the SDK")
def scoring(data):
    s = score(data=data)
    return {"rows": s.outputs.rows}


pipe = ml_client.jobs.create_or_update(
    scoring(data=Input(type="uri_folder", path=os.path.join(here, "notebook_data"))), experiment_name="parallel")
out("submitted", name=pipe.name)
got = ml_client.jobs.get(pipe.name)
node = list(got.jobs.values())[0]
out("read_back", type=node.type, entry_script=node.task.entry_script if node.task else None,
    mini_batch_size=str(node.mini_batch_size))
ml_client.jobs.begin_cancel(pipe.name).result()
out("canceled")
