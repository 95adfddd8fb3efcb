"""The Python examples of seeds 000 and 002, run with Azure's own SDK
(azure-ai-ml 1.4.0 from Debian's python3-azure) against a Shoal server:
only where the client connects differs (AZUREML_DEV_URL_MFE, the CA bundle
in REQUESTS_CA_BUNDLE, and AZURE_AUTHORITY_HOST with a Shoal service
principal's AZURE_TENANT_ID, AZURE_CLIENT_ID and AZURE_CLIENT_SECRET, which
azure-identity's DefaultAzureCredential reads). Prints one line per step,
which the Go test compares with what `shoal compute show` then prints."""

import json
import os
import time

from azure.ai.ml import MLClient
from azure.ai.ml.constants import TimeZone
from azure.ai.ml.entities import (AmlCompute, AssignedUserConfiguration, ComputeInstance,
                                  ComputeInstanceSshSettings, ComputeSchedules, ComputeStartStopSchedule, Data, Environment,
                                  IdentityConfiguration, Model, RecurrencePattern, RecurrenceTrigger)
from azure.identity import DefaultAzureCredential

ml_client = MLClient(DefaultAzureCredential(), "00000000-0000-0000-0000-000000000000", "ml-project-rg", "default")


def say(step, **values):
    print(json.dumps({"step": step, **values}), flush=True)


# Seed 000: a basic cluster, a low-priority one, one with a managed identity.
cluster_basic = AmlCompute(name="cpu-cluster", type="amlcompute", size="STANDARD_DS3_v2",
                           location="westus", min_instances=0, max_instances=2,
                           idle_time_before_scale_down=120)
r = ml_client.begin_create_or_update(cluster_basic).result()
say("cluster", name=r.name, size=r.size, max=r.max_instances, idle=int(r.idle_time_before_scale_down))

cluster_low_pri = AmlCompute(name="low-pri-example", size="STANDARD_DS3_v2", min_instances=0,
                             max_instances=2, idle_time_before_scale_down=120, tier="low_priority")
r = ml_client.begin_create_or_update(cluster_low_pri).result()
say("low_priority", name=r.name, tier=r.tier)

cluster_identity = AmlCompute(name="identity-cluster", size="STANDARD_DS3_v2", max_instances=2,
                              identity=IdentityConfiguration(type="system_assigned"))
r = ml_client.begin_create_or_update(cluster_identity).result()
say("identity", name=r.name, type=r.identity.type)

# Seed 002: instances — basic, with idle shutdown, with SSH, on behalf of a user.
ci_basic = ComputeInstance(name="ci-basic-demo", size="STANDARD_DS3_v2")
r = ml_client.begin_create_or_update(ci_basic).result()
say("instance", name=r.name, state=r.state)

ci_idle = ComputeInstance(name="ci-idle-demo", size="STANDARD_DS3_v2", idle_time_before_shutdown_minutes="30")  # as the seed writes it
r = ml_client.begin_create_or_update(ci_idle).result()
say("idle_shutdown", name=r.name, minutes=r.idle_time_before_shutdown_minutes)

ci_ssh = ComputeInstance(name="ci-ssh-demo", size="STANDARD_DS3_v2", ssh_public_access_enabled=True,
                         ssh_settings=ComputeInstanceSshSettings(ssh_key_value=os.environ["SSH_KEY"]))
r = ml_client.begin_create_or_update(ci_ssh).result()
say("ssh", name=r.name, enabled=r.ssh_public_access_enabled, admin=r.ssh_settings.admin_username)

ci_obo = ComputeInstance(name="ci-obo-demo", size="STANDARD_DS3_v2",
                         create_on_behalf_of=AssignedUserConfiguration(user_tenant_id="tenant-1", user_object_id="dana"))
r = ml_client.begin_create_or_update(ci_obo).result()
say("on_behalf_of", name=r.name, user=r.create_on_behalf_of.user_object_id)

ci_start_time = "2023-06-21T11:47:00"
rec_trigger = RecurrenceTrigger(start_time=ci_start_time, time_zone=TimeZone.INDIA_STANDARD_TIME, frequency="week",
                                interval=1, schedule=RecurrencePattern(week_days=["Friday"], hours=15, minutes=[30]))
myschedule = ComputeStartStopSchedule(trigger=rec_trigger, action="start")
com_sch = ComputeSchedules(compute_start_stop=[myschedule])
# The seed's call as written: no .result(); the instance is read back once
# its creation has ended.
my_compute = ComputeInstance(name="ci-sched-demo", schedules=com_sch)
ml_client.compute.begin_create_or_update(my_compute)
for _ in range(300):
    r = ml_client.compute.get("ci-sched-demo")
    if r.provisioning_state != "Creating":
        break
    time.sleep(0.2)
s0 = r.schedules.compute_start_stop[0]
say("schedule", action=s0.action, frequency=s0.trigger.frequency, time_zone=s0.trigger.time_zone)

# Beyond the seeds: an instance with a creation script (azure-ai-ml 1.4.0
# keeps SetupScripts and ScriptReference out of azure.ai.ml.entities).
from azure.ai.ml.entities._compute._setup_scripts import ScriptReference, SetupScripts  # noqa: E402

ci_setup = ComputeInstance(name="ci-setup-demo", size="STANDARD_DS3_v2", setup_scripts=SetupScripts(
    creation_script=ScriptReference(command="echo made-by-the-sdk > setup-ran.txt", timeout_minutes=5)))
r = ml_client.begin_create_or_update(ci_setup).result()
cs = r.setup_scripts.creation_script
say("setup_scripts", command=cs.command, timeout=int(cs.timeout_minutes))

# The verbs.
ml_client.compute.begin_stop("ci-basic-demo").wait()
say("stop", state=ml_client.compute.get("ci-basic-demo").state)
ml_client.compute.begin_start("ci-basic-demo").wait()
say("start", state=ml_client.compute.get("ci-basic-demo").state)
ml_client.compute.begin_restart("ci-basic-demo").wait()
say("restart", state=ml_client.compute.get("ci-basic-demo").state)
say("get", max=ml_client.compute.get("cpu-cluster").max_instances)
say("list", names=sorted(c.name for c in ml_client.compute.list()))
say("list_nodes", nodes=len(list(ml_client.compute.list_nodes("cpu-cluster"))))
say("list_sizes", count=len(list(ml_client.compute.list_sizes())))
say("list_usage", count=len(list(ml_client.compute.list_usage())))
ml_client.compute.begin_delete("low-pri-example").wait()
say("delete", names=sorted(c.name for c in ml_client.compute.list()))

# Registered environments (issue 23) through azure-ai-ml's environments
# operations: the first create asks the container for its next version
# (404: 1), the second gets 2; @latest lists versions newest first, $top 1;
# archive reads the version and puts it back archived.
env = ml_client.environments.create_or_update(Environment(name="sdk-env", image="python:3.11", description="made by azure-ai-ml"))
say("env_create", name=env.name, version=env.version, image=env.image)
say("env_next", version=ml_client.environments.create_or_update(Environment(name="sdk-env", image="python:3.12")).version)
say("env_get", image=ml_client.environments.get("sdk-env", version="1").image,
    latest=ml_client.environments.get("sdk-env", label="latest").version)
ml_client.environments.archive("sdk-env", version="2")
say("env_archive", versions=sorted(e.version for e in ml_client.environments.list(name="sdk-env")),
    names=sorted(e.name for e in ml_client.environments.list()))

# Data assets and models (issue 36) through azure-ai-ml's data and models
# operations: a URL registered as a uri_file, read back and archived (the
# SDK reads the version and puts it back archived); a model with its
# properties.
data = ml_client.data.create_or_update(Data(name="sdk-iris", version="1", type="uri_file",
                                            path="https://example.com/iris.csv", description="made by azure-ai-ml"))
say("data_create", name=data.name, version=data.version, type=data.type, path=data.path)
say("data_get", path=ml_client.data.get("sdk-iris", version="1").path)
ml_client.data.archive("sdk-iris", version="1")
model = ml_client.models.create_or_update(Model(name="sdk-clf", version="1", type="custom_model",
                                                path="https://example.com/clf/model.pkl", properties={"framework": "sklearn"}))
say("model_create", name=model.name, version=model.version, type=model.type, path=model.path)
say("model_get", framework=ml_client.models.get("sdk-clf", version="1").properties.get("framework"))
