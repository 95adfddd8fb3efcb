"""Azure's tutorial tutorials/get-started-notebooks/train-model.ipynb, cell
by cell with azure-ai-ml 1.4.0 against Shoal. What differs from the
tutorial: the endpoint and credential (environment variables); the data
(50 made-up rows of the same columns, nb_train_data/credit.csv, uploaded
as a local input: the tutorial reads it from azuremlexamples.blob.core.
windows.net, which is not reachable here); the image (the test
registry's, and no conda file: it has no conda); the compute, named (the
tutorial's serverless compute needs azure-ai-ml 1.11 or later); and the
training script (a stand-in with the standard library only,
nb_train_src/main.py). One JSON line per step for
e2e/azurepy_notebooks_test.go."""
import json
import os

from azure.ai.ml import Input, MLClient, command
from azure.ai.ml.entities import Environment
from azure.identity import DefaultAzureCredential


def out(step, **kw):
    print(json.dumps({"step": step, **kw}), flush=True)


here = os.path.dirname(os.path.abspath(__file__))
credential = DefaultAzureCredential()
SUBSCRIPTION = "any-subscription"
RESOURCE_GROUP = "any-rg"
WS_NAME = "default"
ml_client = MLClient(credential=credential, subscription_id=SUBSCRIPTION, resource_group_name=RESOURCE_GROUP,
                     workspace_name=WS_NAME)
ws = ml_client.workspaces.get(WS_NAME)
print(ws.location, ":", ws.resource_group)
out("workspace", name=ws.name, location=ws.location, resource_group=ws.resource_group)

custom_env_name = "aml-scikit-learn"
custom_job_env = Environment(name=custom_env_name, description="Custom environment for Credit Card Defaults job",
                             tags={"scikit-learn": "1.0.2"}, image=os.environ["IMAGE"])
custom_job_env = ml_client.environments.create_or_update(custom_job_env)
print(f"Environment with name {custom_job_env.name} is registered to workspace, "
      f"the environment version is {custom_job_env.version}")
out("environment", name=custom_job_env.name, version=custom_job_env.version, tags=custom_job_env.tags)

registered_model_name = "credit_defaults_model"
job = command(
    inputs=dict(
        data=Input(type="uri_file", path=os.path.join(here, "nb_train_data", "credit.csv")),
        test_train_ratio=0.2,
        learning_rate=0.25,
        registered_model_name=registered_model_name,
    ),
    code=os.path.join(here, "nb_train_src"),
    command="python3 main.py --data ${{inputs.data}} --test_train_ratio ${{inputs.test_train_ratio}} "
            "--learning_rate ${{inputs.learning_rate}} --registered_model_name ${{inputs.registered_model_name}}",
    environment="aml-scikit-learn@latest",
    compute=os.environ["CLUSTER"],
    display_name="credit_default_prediction",
)
returned = ml_client.create_or_update(job)
out("submitted", name=returned.name, display_name=returned.display_name, studio=bool(returned.studio_url))
ml_client.jobs.stream(returned.name)
got = ml_client.jobs.get(returned.name)
out("completed", status=got.status, data=str(got.inputs["data"].path))
