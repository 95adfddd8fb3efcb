# Generates pipeline_sweep.json: what azure-ai-ml 1.4.0 serializes for a
# @dsl.pipeline whose node is command(...)(...).sweep(...). Run with
# /usr/bin/python3 (Debian's python3-azure) from a folder with src/t.py; the
# trial's id is set as the SDK sets it once it registered the component.
import json
from azure.ai.ml import command, Input, Output, dsl
from azure.ai.ml.sweep import Choice, Uniform, BanditPolicy
train = command(code="./src", command="python t.py --lr ${{inputs.lr}} --data ${{inputs.data}} --out ${{outputs.model}}",
    inputs={"lr": 0.1, "data": Input(type="uri_folder")}, outputs={"model": Output(type="uri_folder")},
    environment="azureml:env:1", compute="azureml:/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default/computes/cpu")
@dsl.pipeline(default_compute="cpu")
def p(data):
    t = train(lr=Uniform(0.01, 0.1), data=data)
    s = t.sweep(primary_metric="acc", goal="maximize", sampling_algorithm="random", compute="cpu")
    s.set_limits(max_total_trials=2, max_concurrent_trials=2, timeout=600)
    s.early_termination = BanditPolicy(slack_factor=0.1, evaluation_interval=1)
    return {"model": s.outputs.model}
job = p(data=Input(type="uri_folder", path="azureml:iris@latest"))
job.experiment_name = "pipes"
node = job.jobs["t"] if "t" in job.jobs else list(job.jobs.values())[0]
# the SDK resolves the trial to a registered (anonymous) component's ARM id before it sends
node.trial._id = "azureml:/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default/components/train/versions/1"
rest = job._to_rest_object().serialize()
print(json.dumps(rest, indent=1, sort_keys=True, default=str))
