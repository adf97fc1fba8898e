#!/usr/bin/python3
"""Writes the seed corpus of fuzz_request: a few valid requests of every
method of csched.v1.Scheduler, each file the method's index in
scheduler.proto (one byte) and then the encoded request, as the target reads
them; then health's and reflection's requests, at the indices after the
Scheduler's (in the order of server/api.c's cs_api_methods). Run from anywhere; needs grpc_tools and protobuf (python3-grpc-tools,
python3-protobuf). Rewrites tests/fuzz/corpus/request/seed-*.

    tests/fuzz/seed_requests.py
"""
import importlib
import importlib.util
import os
import sys
import tempfile

from grpc_tools import protoc

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_DIR = os.path.join(HERE, "..", "..", "proto")
OUT_DIR = os.path.join(HERE, "corpus", "request")


GRPC_PROTO_DIR = "/usr/share/grpc-proto"
OTHERS = ["grpc/health/v1/health.proto", "grpc/reflection/v1/reflection.proto"]


def load_messages(tmp):
    rc = protoc.main(["protoc", "-I" + PROTO_DIR, "-I" + GRPC_PROTO_DIR, "--python_out=" + tmp,
                      "csched/v1/scheduler.proto"] + OTHERS)
    if rc != 0:
        sys.exit("seed_requests: protoc failed")
    sys.path.insert(0, tmp)
    return [importlib.import_module("csched.v1.scheduler_pb2")] + [load_file(tmp, p) for p in OTHERS]


def load_file(tmp, proto):
    """A generated module under grpc/ by its file: as a package "grpc" it
    would shadow grpcio's own."""
    path = os.path.join(tmp, proto[:-len(".proto")] + "_pb2.py")
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def other_seeds(health, reflection):
    """The requests of the other services served, in cs_api_methods' order."""
    r = reflection
    return [
        ("HealthCheck", [health.HealthCheckRequest(),
                         health.HealthCheckRequest(service="csched.v1.Scheduler")]),
        ("ServerReflectionInfo", [
            r.ServerReflectionRequest(host="h", list_services=""),
            r.ServerReflectionRequest(file_by_filename="csched/v1/scheduler.proto"),
            r.ServerReflectionRequest(file_containing_symbol="csched.v1.Job"),
            r.ServerReflectionRequest(file_containing_extension=r.ExtensionRequest(
                containing_type="csched.v1.Job", extension_number=7)),
            r.ServerReflectionRequest(all_extension_numbers_of_type="csched.v1.Job")]),
    ]


def seeds(pb):
    """Method name -> requests: the valid ones, and some a check refuses."""
    job = pb.Job(name="build", command=["make", "-j2", "all targets"],
                 env={"CC": "gcc", "EMPTY": ""}, working_dir="/src", max_running=2,
                 timeout_seconds=600, max_attempts=3, retry_backoff_ms=500,
                 labels={"team": "core"})
    nightly = pb.Job(name="nightly.backup-1", shell="tar czf /tmp/b.tgz /etc && echo ok",
                     secret_env={"DB_PASSWORD": pb.SecretRef(file="/etc/csched/db"),
                                 "TOKEN": pb.SecretRef(server_env="BACKUP_TOKEN")})
    return {
        "CreateJob": [pb.CreateJobRequest(job=job), pb.CreateJobRequest(job=nightly),
                      pb.CreateJobRequest(job=pb.Job(name="-bad", command=[""]))],
        "UpdateJob": [pb.UpdateJobRequest(job=job, expected_version=3),
                      pb.UpdateJobRequest(job=pb.Job(name="x", shell="true", command=["a"]))],
        "GetJob": [pb.GetJobRequest(name="build"), pb.GetJobRequest(name="no such/job")],
        "ListJobs": [pb.ListJobsRequest(), pb.ListJobsRequest(page_size=2, page_token="after:build"),
                     pb.ListJobsRequest(page_size=5000, page_token="after:")],
        "DeleteJob": [pb.DeleteJobRequest(name="nightly.backup-1")],
        "TriggerJob": [pb.TriggerJobRequest(job_name="build", env={"CC": "clang", "V": "1"},
                                            idempotency_key="deploy-42"),
                       pb.TriggerJobRequest(job_name="build", env={"A=B": "c", "": "x"})],
        "GetRun": [pb.GetRunRequest(run_id=51), pb.GetRunRequest(run_id=-1)],
        "ListRuns": [pb.ListRunsRequest(),
                     pb.ListRunsRequest(job_name="build", state=pb.RUN_STATE_FAILED,
                                        page_size=1000, page_token="120")],
        "CancelRun": [pb.CancelRunRequest(run_id=7)],
        "Watch": [pb.WatchRequest(), pb.WatchRequest(after_seq=0, job_name="build"),
                  pb.WatchRequest(after_seq=-5)],
        "ReadLogs": [pb.ReadLogsRequest(run_id=51, attempt=2, stream=pb.LOG_STREAM_STDERR,
                                        follow=True)],
        "GetStats": [pb.GetStatsRequest()],
        "PauseJob": [pb.PauseJobRequest(name="build", reason="maintenance")],
        "ResumeJob": [pb.ResumeJobRequest(name="build")],
        "BackfillJob": [pb.BackfillJobRequest(name="build", from_unix_ms=1000, to_unix_ms=2000),
                        pb.BackfillJobRequest(name="build", from_unix_ms=5, to_unix_ms=1)],
        "ListSlots": [pb.ListSlotsRequest(job_name="build", from_unix_ms=0, to_unix_ms=-1,
                                          outcome=1, page_size=10, page_token="x")],
        "ListAudit": [pb.ListAuditRequest(),
                      pb.ListAuditRequest(identity="unix:uid=0(root)", method="TriggerJob",
                                          job_name="build", run_id=51, since_unix_ms=1000,
                                          until_unix_ms=2000, page_size=10, page_token="77"),
                      pb.ListAuditRequest(since_unix_ms=5, until_unix_ms=1, page_token="x")],
        "ListReplicas": [pb.ListReplicasRequest()],
        "SetClusterLimits": [pb.SetClusterLimitsRequest(max_running=4)],
        "ListHookDeliveries": [pb.ListHookDeliveriesRequest(job_name="build"),
                               pb.ListHookDeliveriesRequest(job_name="build", limit=5000,
                                                            before_id=-3)],
        "ListFires": [pb.ListFiresRequest(),
                      pb.ListFiresRequest(from_unix_ms=1000, to_unix_ms=86401000,
                                          label_selector="team=core", page_size=5000,
                                          page_token="fires:build"),
                      pb.ListFiresRequest(from_unix_ms=5, to_unix_ms=1, page_token="x")],
        "ListDependencyCauses": [pb.ListDependencyCausesRequest(job_name="build"),
                                 pb.ListDependencyCausesRequest(job_name="-bad", limit=5000)],
    }


def main():
    with tempfile.TemporaryDirectory() as tmp:
        pb, health, reflection = load_messages(tmp)
        service = pb.DESCRIPTOR.services_by_name["Scheduler"]
        by_method = seeds(pb)
        missing = [m.name for m in service.methods if m.name not in by_method]
        if missing:
            sys.exit("seed_requests: no seed for " + ", ".join(missing))
        os.makedirs(OUT_DIR, exist_ok=True)
        for old in os.listdir(OUT_DIR):
            if old.startswith("seed-"):
                os.remove(os.path.join(OUT_DIR, old))
        for method in service.methods:
            for i, req in enumerate(by_method[method.name]):
                path = os.path.join(OUT_DIR, "seed-%s-%d" % (method.name, i))
                with open(path, "wb") as f:
                    f.write(bytes([method.index]) + req.SerializeToString())
        for index, (name, reqs) in enumerate(other_seeds(health, reflection),
                                             len(service.methods)):
            for i, req in enumerate(reqs):
                with open(os.path.join(OUT_DIR, "seed-%s-%d" % (name, i)), "wb") as f:
                    f.write(bytes([index]) + req.SerializeToString())


if __name__ == "__main__":
    main()
