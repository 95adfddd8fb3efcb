"""Azure's notebook sdk/python/jobs/pipelines/1a_pipeline_with_components_
from_yaml, cell by cell with azure-ai-ml 1.4.0 against Shoal: three
command components loaded from YAML (load_component), each with its own
code folder and Azure's curated environment azureml://registries/azureml/
environments/sklearn-1.5/labels/latest (which the server's
curated_environments maps to the test image), wired into a @pipeline
with a local data folder as input, submitted and streamed to its end.
What differs: the endpoint and credential; the components and their
scripts are this test's own of the same shape (nb_pipeline/), with
python3 (the test image has no `python`). One JSON line per step for
e2e/azurepy_notebooks_test.go."""
import json
import os
import tempfile

from azure.ai.ml import Input, MLClient, load_component
from azure.ai.ml.dsl import pipeline
from azure.identity import DefaultAzureCredential


def out(step, **kw):
    print(json.dumps({"step": step, **kw}), flush=True)


credential = DefaultAzureCredential()
credential.get_token("https://management.azure.com/.default")
ml_client = MLClient(credential, "any-subscription", "any-rg", "default")
cluster_name = os.environ["CLUSTER"]
print(ml_client.compute.get(cluster_name))

parent_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nb_pipeline")
train_model = load_component(source=parent_dir + "/train.yml")
score_data = load_component(source=parent_dir + "/score.yml")
eval_model = load_component(source=parent_dir + "/eval.yml")
print(train_model)


@pipeline()
def pipeline_with_components_from_yaml(training_input, test_input, training_max_epochs=20,
                                       training_learning_rate=1.8, learning_rate_schedule="time-based"):
    """E2E dummy train-score-eval pipeline with components defined via yaml."""
    train_with_sample_data = train_model(training_data=training_input, max_epochs=training_max_epochs,
                                         learning_rate=training_learning_rate,
                                         learning_rate_schedule=learning_rate_schedule)
    score_with_sample_data = score_data(model_input=train_with_sample_data.outputs.model_output,
                                        test_data=test_input)
    score_with_sample_data.outputs.score_output.mode = "upload"
    eval_with_sample_data = eval_model(scoring_result=score_with_sample_data.outputs.score_output)
    return {
        "trained_model": train_with_sample_data.outputs.model_output,
        "scored_data": score_with_sample_data.outputs.score_output,
        "evaluation_report": eval_with_sample_data.outputs.eval_output,
    }


pipeline_job = pipeline_with_components_from_yaml(
    training_input=Input(type="uri_folder", path=parent_dir + "/data/"),
    test_input=Input(type="uri_folder", path=parent_dir + "/data/"),
    training_max_epochs=20, training_learning_rate=1.8, learning_rate_schedule="time-based")
pipeline_job.settings.default_compute = cluster_name
pipeline_job = ml_client.jobs.create_or_update(pipeline_job, experiment_name="pipeline_samples")
out("submitted", name=pipeline_job.name)
ml_client.jobs.stream(pipeline_job.name)
out("pipeline", status=ml_client.jobs.get(pipeline_job.name).status,
    steps=sorted([j.display_name or j.name, j.status] for j in ml_client.jobs.list(parent_job_name=pipeline_job.name)))
# Beyond the notebook: the evaluation report, downloaded as Azure lays it out.
dl = tempfile.mkdtemp()
ml_client.jobs.download(pipeline_job.name, download_path=dl, output_name="evaluation_report")
report = os.path.join(dl, "named-outputs", "evaluation_report", "eval.txt")
out("report", text=open(report).read().strip() if os.path.exists(report) else None)
