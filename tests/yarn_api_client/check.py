"""yarn-api-client (PyPI, unpatched) against a live yard rm: every ResourceManager call for the
routes yard serves must succeed with YARN's shapes. Run by tests/yarn_api_client.rs with
YARD_RM (the rm's URL), YARD_TOKEN (an admin token) and YARD_NODE (a running node's id)."""
import os
import sys
import time

import requests
from yarn_api_client import ResourceManager
from yarn_api_client.errors import APIError

RM = os.environ["YARD_RM"]
TOKEN = os.environ["YARD_TOKEN"]
NODE = os.environ["YARD_NODE"]

# Fields Hadoop's ResourceManagerRest documents, with their JSON types.
APP = {"id": str, "user": str, "name": str, "applicationType": str, "queue": str, "state": str,
       "finalStatus": str, "progress": (int, float), "trackingUI": str, "trackingUrl": str,
       "diagnostics": str, "clusterId": int, "startedTime": int, "finishedTime": int,
       "elapsedTime": int, "amContainerLogs": str, "amHostHttpAddress": str, "allocatedMB": int,
       "allocatedVCores": int, "runningContainers": int, "memorySeconds": int, "vcoreSeconds": int,
       "unmanagedApplication": bool, "applicationPriority": int, "appNodeLabelExpression": str,
       "amNodeLabelExpression": str}
NODE_FIELDS = {"rack": str, "state": str, "id": str, "nodeHostName": str, "nodeHTTPAddress": str,
               "healthStatus": str, "healthReport": str, "lastHealthUpdate": int, "version": str,
               "usedMemoryMB": int, "availMemoryMB": int, "usedVirtualCores": int,
               "availableVirtualCores": int, "numContainers": int}
CLUSTER_INFO = {"id": int, "startedOn": int, "state": str, "haState": str, "rmStateStoreName": str,
                "resourceManagerVersion": str, "resourceManagerBuildVersion": str,
                "resourceManagerVersionBuiltOn": str, "hadoopVersion": str,
                "hadoopBuildVersion": str, "hadoopVersionBuiltOn": str}
METRICS = {k: int for k in ["appsSubmitted", "appsCompleted", "appsPending", "appsRunning",
                            "appsFailed", "appsKilled", "reservedMB", "availableMB", "allocatedMB",
                            "totalMB", "reservedVirtualCores", "availableVirtualCores",
                            "allocatedVirtualCores", "totalVirtualCores", "containersAllocated",
                            "containersReserved", "containersPending", "totalNodes", "activeNodes",
                            "lostNodes", "unhealthyNodes", "decommissionedNodes", "rebootedNodes"]}
ATTEMPT = {"id": int, "nodeId": str, "nodeHttpAddress": str, "logsLink": str, "containerId": str,
           "startTime": int}
CONTAINER = {"containerId": str, "allocatedMB": int, "allocatedVCores": int, "assignedNodeId": str,
             "priority": int, "startedTime": int, "finishedTime": int, "elapsedTime": int,
             "containerState": str, "nodeId": str}

failures = []


def check(what, obj, fields):
    if not isinstance(obj, dict):
        failures.append(f"{what}: not an object: {obj!r}")
        return
    for name, kind in fields.items():
        if name not in obj:
            failures.append(f"{what}: no field {name}")
        elif not isinstance(obj[name], kind) or (kind is int and isinstance(obj[name], bool)):
            failures.append(f"{what}.{name}: {obj[name]!r} is not {kind}")


def call(what, f, *args, **kwargs):
    try:
        return f(*args, **kwargs).data
    except APIError as e:
        failures.append(f"{what}: {e}")
        return {}


class Bearer(requests.auth.AuthBase):
    def __call__(self, r):
        r.headers["Authorization"] = "Bearer " + TOKEN
        return r


rm = ResourceManager(service_endpoints=[RM], timeout=30, auth=Bearer())
check("clusterInfo", call("cluster_information", rm.cluster_information).get("clusterInfo"), CLUSTER_INFO)
check("clusterMetrics", call("cluster_metrics", rm.cluster_metrics).get("clusterMetrics"), METRICS)
sched = call("cluster_scheduler", rm.cluster_scheduler)
if not sched.get("scheduler", {}).get("schedulerInfo", {}).get("type"):
    failures.append(f"scheduler: no schedulerInfo.type in {sched}")
queue = rm.cluster_scheduler_queue("default")
if queue is None:
    failures.append("cluster_scheduler_queue('default') found no queue")
else:
    part = rm.cluster_queue_partition(queue, "")
    if part is None:
        failures.append("cluster_queue_partition(default, '') found no partition")
    elif not rm.cluster_scheduler_queue_availability(part, 100):
        failures.append("an idle cluster's default queue is not available")

nodes = call("cluster_nodes", rm.cluster_nodes).get("nodes", {}).get("node", [])
if not nodes:
    failures.append("cluster_nodes: no node")
for n in nodes:
    check("node", n, NODE_FIELDS)
running = call("cluster_nodes(RUNNING)", rm.cluster_nodes, states=["RUNNING"])["nodes"]["node"]
if [n["id"] for n in running] != [NODE]:
    failures.append(f"cluster_nodes(states=[RUNNING]): {running}")
check("node", call("cluster_node", rm.cluster_node, NODE).get("node"), NODE_FIELDS)

new = call("cluster_new_application", rm.cluster_new_application)
app_id = new["application-id"]
cap = new["maximum-resource-capability"]
submission = {
    "application-id": app_id,
    "application-name": "yarn-api-client",
    "queue": "default",
    "priority": 3,
    "am-container-spec": {
        "commands": {"command": "sleep 120 1><LOG_DIR>/AppMaster.stdout 2><LOG_DIR>/AppMaster.stderr"},
        "environment": {"entry": [{"key": "GREETING", "value": "hi{{HOME}}<CPS>x"}]},
    },
    "max-app-attempts": 1,
    "resource": {"memory": 256, "vCores": 1},
    "application-type": "PYTHON",
    "application-tags": {"tag": ["client-test"]},
}
if cap["memory"] < 256:
    failures.append(f"maximum-resource-capability {cap}")
call("cluster_submit_application", rm.cluster_submit_application, submission)

# The master's container is granted and started on the node.
attempts = []
for _ in range(300):
    attempts = call("cluster_application_attempts", rm.cluster_application_attempts, app_id)["appAttempts"]["appAttempt"]
    if attempts:
        break
    time.sleep(0.1)
if not attempts:
    failures.append("no attempt within 30 s")
    print("\n".join(failures))
    sys.exit(1)
check("appAttempt", attempts[0], ATTEMPT)
attempt_id = "appattempt_" + app_id[len("application_"):] + "_000001"
one = call("cluster_application_attempt_info", rm.cluster_application_attempt_info, app_id, attempt_id)
check("appAttempt (one)", one.get("appAttempt"), ATTEMPT)
containers = call("cluster_application_attempt_containers", rm.cluster_application_attempt_containers,
                  app_id, attempt_id)["containers"]["container"]
if len(containers) != 1:
    failures.append(f"containers of the attempt: {containers}")
else:
    check("container", containers[0], CONTAINER)
    if containers[0]["allocatedMB"] != 256:
        failures.append(f"the master's container has {containers[0]['allocatedMB']} MB, not the 256 asked")
    cid = containers[0]["containerId"]
    # Hadoop's ContainerId.fromString: container_[e<epoch>_]<cluster ts>_<app>_<attempt>_<n>,
    # the epoch a small restart count, the rest the application's id and the attempt's.
    import re
    m = re.fullmatch(r"container_(?:e(\d+)_)?(\d+)_(\d{4,})_(\d{2,})_(\d{6,})", cid)
    if not m or "application_%s_%s" % (m.group(2), m.group(3)) != app_id or int(m.group(1) or 0) > 2**24:
        failures.append(f"container id {cid} is not Hadoop's ContainerId form for {app_id}")
    check("container (one)", call("cluster_application_attempt_container_info",
                                  rm.cluster_application_attempt_container_info,
                                  app_id, attempt_id, cid).get("container"), CONTAINER)

app = call("cluster_application", rm.cluster_application, app_id).get("app", {})
check("app", app, APP)
if app.get("applicationType") != "PYTHON" or app.get("applicationTags") != "client-test":
    failures.append(f"type and tags not kept: {app}")

def ids(**filters):
    return [a["id"] for a in (call(f"cluster_applications({filters})", rm.cluster_applications, **filters)
                              .get("apps") or {}).get("app") or []]

for filters, want in [
    ({}, [app_id]),
    ({"states": ["ACCEPTED", "RUNNING"]}, [app_id]),
    ({"states": ["FINISHED"]}, []),
    ({"state": "ACCEPTED"}, [app_id]),
    ({"final_status": "UNDEFINED"}, [app_id]),
    ({"final_status": "SUCCEEDED"}, []),
    ({"user": app["user"]}, [app_id]),
    ({"user": "nobody"}, []),
    ({"queue": "default"}, [app_id]),
    ({"limit": "1"}, [app_id]),
    ({"started_time_begin": str(app["startedTime"]), "started_time_end": str(app["startedTime"])}, [app_id]),
    ({"started_time_begin": str(app["startedTime"] + 1)}, []),
    ({"finished_time_begin": "1"}, []),
    ({"application_types": ["python"]}, [app_id]),
    ({"application_types": ["MAPREDUCE"]}, []),
    ({"application_tags": ["client-test"]}, [app_id]),
    ({"application_tags": ["other"]}, []),
    ({"name": "yarn-api-client"}, [app_id]),
    ({"de_selects": ["resourceRequests"]}, [app_id]),
]:
    got = ids(**filters)
    if got != want:
        failures.append(f"cluster_applications({filters}): {got}, not {want}")

stats = call("cluster_application_statistics", rm.cluster_application_statistics,
             states=["ACCEPTED", "RUNNING"], application_types=["python"])["appStatInfo"]["statItem"]
if sum(s["count"] for s in stats) != 1 or {s["type"] for s in stats} != {"python"}:
    failures.append(f"cluster_application_statistics: {stats}")

state = call("cluster_application_state", rm.cluster_application_state, app_id)
if state.get("state") not in ("ACCEPTED", "RUNNING"):
    failures.append(f"cluster_application_state: {state}")
if call("cluster_get_application_queue", rm.cluster_get_application_queue, app_id) != {"queue": "default"}:
    failures.append("cluster_get_application_queue")
if call("cluster_change_application_queue", rm.cluster_change_application_queue, app_id, "default") != {"queue": "default"}:
    failures.append("cluster_change_application_queue to its own queue")
if call("cluster_get_application_priority", rm.cluster_get_application_priority, app_id) != {"priority": 0}:
    failures.append("cluster_get_application_priority")
if call("cluster_change_application_priority", rm.cluster_change_application_priority, app_id, 5) != {"priority": 0}:
    failures.append("cluster_change_application_priority (capped to 0)")
timeouts = call("cluster_application_timeouts", rm.cluster_application_timeouts, app_id)
if timeouts.get("timeouts", {}).get("timeout", [{}])[0].get("expiryTime") != "UNLIMITED":
    failures.append(f"cluster_application_timeouts: {timeouts}")
expiry = time.strftime("%Y-%m-%dT%H:%M:%S.000+0000", time.gmtime(time.time() + 3600))
updated = call("cluster_update_application_timeout", rm.cluster_update_application_timeout, app_id, "LIFETIME", expiry)
if updated.get("timeout", {}).get("expiryTime") != expiry:
    failures.append(f"cluster_update_application_timeout: {updated}")
one_timeout = call("cluster_application_timeout", rm.cluster_application_timeout, app_id, "LIFETIME")
if not 3500 <= one_timeout.get("timeout", {}).get("remainingTimeInSeconds", 0) <= 3600:
    failures.append(f"cluster_application_timeout: {one_timeout}")

# Errors: YARN's status codes and RemoteException.
bad = requests.get(RM + "/ws/v1/cluster/apps", params={"states": "BOGUS"}, auth=Bearer())
if bad.status_code != 400 or bad.json().get("RemoteException", {}).get("exception") != "BadRequestException":
    failures.append(f"states=BOGUS: {bad.status_code} {bad.text}")
missing = requests.get(RM + "/ws/v1/cluster/apps/application_1_9999", auth=Bearer())
if missing.status_code != 404 or missing.json().get("RemoteException", {}).get("exception") != "NotFoundException":
    failures.append(f"an unknown app: {missing.status_code} {missing.text}")
xml = requests.get(RM + "/ws/v1/cluster/info", headers={"Accept": "application/xml"})
if xml.status_code != 406:
    failures.append(f"Accept: application/xml: {xml.status_code}")

# Kill, YARN's way: 202 with Location, then repeat the PUT until 200.
first = requests.put(RM + f"/ws/v1/cluster/apps/{app_id}/state", json={"state": "KILLED"}, auth=Bearer())
if first.status_code != 202 or not first.headers.get("Location", "").endswith(f"/ws/v1/cluster/apps/{app_id}"):
    failures.append(f"kill: {first.status_code} {first.headers}")
killed = call("cluster_application_kill (again)", rm.cluster_application_kill, app_id)
if killed != {"state": "KILLED"}:
    failures.append(f"a repeated kill: {killed}")
app = call("cluster_application", rm.cluster_application, app_id).get("app", {})
check("app (killed)", app, APP)
if app.get("finishedTime", 0) <= 0 or app.get("finalStatus") != "KILLED":
    failures.append(f"a killed app: {app}")
if ids(finished_time_begin=str(app["finishedTime"]), states=["KILLED"]) != [app_id]:
    failures.append("finishedTimeBegin does not find the killed app")

if failures:
    print("yarn-api-client against yard: FAILED\n  " + "\n  ".join(failures))
    sys.exit(1)
print("yarn-api-client against yard: every call passed")
