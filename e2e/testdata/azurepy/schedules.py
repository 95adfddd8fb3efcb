"""Job schedules with azure-ai-ml 1.4.0 against Shoal
(docs/reference/schedule-yaml.md, "Azure's SDKs and ARM"): a @dsl.pipeline
under a CronTrigger in a Windows time zone, created with
begin_create_or_update (the SDK registers the step's anonymous component
and environment first), read with get and list, disabled and enabled
again (the SDK PUTs what it read with is_enabled changed), a
RecurrenceTrigger schedule beside it, and that one deleted. The Go test
(e2e/azurepy_schedules_test.go) then fires the cron one with `shoal
schedule trigger` and waits for its job. One JSON line per step."""
import json
import os

from azure.ai.ml import MLClient, command, dsl
from azure.ai.ml._restclient.v2022_10_01.models import ScheduleListViewType
from azure.ai.ml.entities import (CronTrigger, Environment, JobSchedule, RecurrencePattern,
                                  RecurrenceTrigger)
from azure.identity import DefaultAzureCredential


def out(step, **kw):
    # On a line of its own: the SDK's poller prints a dot per poll.
    print("\n" + json.dumps({"step": step, **kw}), flush=True)


ml_client = MLClient(DefaultAzureCredential(), "any-subscription", "any-rg", "default")
cluster = os.environ["CLUSTER"]

hello = command(name="hello", command="echo scheduled hello ${{inputs.n}}", inputs={"n": 3},
                environment=Environment(image=os.environ["IMAGE"]))


@dsl.pipeline(compute=cluster, description="nightly from the SDK")
def nightly(n: int = 3):
    hello(n=n)


cron = JobSchedule(name="sdk-nightly", trigger=CronTrigger(expression="0 2 * * *", time_zone="Pacific Standard Time"),
                   create_job=nightly(n=5), tags={"team": "sdk"})
made = ml_client.schedules.begin_create_or_update(cron).result()
out("created", name=made.name, enabled=made.is_enabled, state=made.provisioning_state,
    trigger=type(made.trigger).__name__, expression=made.trigger.expression, zone=made.trigger.time_zone,
    job_type=made.create_job.type, tags=made.tags)

got = ml_client.schedules.get("sdk-nightly")
out("got", name=got.name, steps=sorted(got.create_job.jobs.keys()), description=got.create_job.description)

weekly = JobSchedule(name="sdk-weekly", create_job=nightly(n=7),
                     trigger=RecurrenceTrigger(frequency="week", interval=1,
                                               schedule=RecurrencePattern(hours=[10], minutes=[0], week_days=["monday", "friday"])))
w = ml_client.schedules.begin_create_or_update(weekly).result()
out("recurrence", name=w.name, frequency=w.trigger.frequency, interval=w.trigger.interval,
    hours=w.trigger.schedule.hours, week_days=w.trigger.schedule.week_days)

off = ml_client.schedules.begin_disable("sdk-nightly").result()
out("disabled", enabled=off.is_enabled)
out("listed", enabled_only=sorted(s.name for s in ml_client.schedules.list()),
    all=sorted(s.name for s in ml_client.schedules.list(list_view_type=ScheduleListViewType.ALL)))
on = ml_client.schedules.begin_enable("sdk-nightly").result()
out("enabled", enabled=on.is_enabled)

ml_client.schedules.begin_delete("sdk-weekly").result()
out("deleted", left=sorted(s.name for s in ml_client.schedules.list(list_view_type=ScheduleListViewType.ALL)))
