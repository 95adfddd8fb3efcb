# Generates pipeline_parallel.json: what azure-ai-ml 1.4.0 serializes for a
# @dsl.pipeline whose node is parallel_run_function(...)(...). Run with
# /usr/bin/python3 (Debian's python3-azure, PYTHONPATH=compat/azurepy/standin for
# pydash) from a folder with src/score.py;
# the task's code is set as the SDK sets it once it uploaded the code.
import json
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.parallel import parallel_run_function, RunFunction
ws = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default"
score = parallel_run_function(
    name="score", inputs={"data": Input(type="mltable"), "model": Input(type="uri_folder")},
    outputs={"rows": Output(type="uri_file")},
    input_data="${{inputs.data}}", instance_count=2, max_concurrency_per_instance=2, mini_batch_size="10kb",
    mini_batch_error_threshold=5, error_threshold=-1, logging_level="DEBUG", retry_settings=dict(max_retries=2, timeout=60),
    partition_keys=["Store", "Brand"],
    environment_variables={"AZUREML_PARALLEL_EXAMPLE": "dsl"},
    task=RunFunction(code="./src", entry_script="score.py", program_arguments="--model ${{inputs.model}}",
        environment="azureml:env:1", append_row_to="${{outputs.rows}}"))
@dsl.pipeline(default_compute="cpu")
def p(data, model):
    s = score(data=data, model=model)
    return {"rows": s.outputs.rows}
job = p(data=Input(type="mltable", path="azureml:iris@latest"), model=Input(type="uri_folder", path="azureml:irismodel:1"))
job.experiment_name = "pipes"
node = list(job.jobs.values())[0]
# the SDK uploads the code and names its version before it sends
node.task.code = "azureml:" + ws + "/codes/src/versions/1"
node.task.environment = "azureml:" + ws + "/environments/env/versions/1"
node.component._id = "azureml:" + ws + "/components/azureml_anonymous/versions/0f3c"
rest = job._to_rest_object().serialize()
print(json.dumps(rest, indent=1, sort_keys=True, default=str))
