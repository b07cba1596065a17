#!/usr/bin/env python3
"""A tunefleet client in Python: the public gRPC contract outside C++.

Uses only the stubs generated from proto/tunefleet/v1/*.proto (package
tunefleet.v1; see generate.sh) and grpcio. It walks through what
`tunefleet tune --server` does:

  1. ListDevices   the device keys the server knows and their agents;
  2. SubmitJob     a small GEMM tuning job (64x64x64, 8 trials by default);
  3. WatchJob      the job's progress, streamed until it ends;
  4. GetJob        the job's progress once more, as one unary call;
  5. QueryRecords  the job's tuning records, a page at a time, following
                   next_page_token until it comes back empty.

Every call carries the bearer token as metadata
("authorization: Bearer <token>"); SubmitJob needs a token of role tuner.
Any RPC error ends the program with exit status 1 and a line naming the
call, the gRPC status code and the server's message.

  PYTHONPATH=OUT_DIR /usr/bin/python3 tunefleet_client.py \\
      --server 127.0.0.1:7878 --token-file tuner.token [--ca ca.pem]

--json FILE also writes everything received as JSON (what the test in
run_test.sh checks).
"""

import argparse
import json
import os
import sys
import time

try:
    import grpc
    from google.protobuf import json_format
except ImportError as e:  # pragma: no cover - depends on the machine
    sys.exit(
        f"tunefleet_client: {e}: install grpcio for this python "
        "(Debian: apt-get install python3-grpcio, or deploy/install-deps.sh)")

try:
    # Generated code: generate.sh OUT_DIR, then PYTHONPATH=OUT_DIR.
    from tunefleet.v1 import common_pb2, tuning_pb2, tuning_pb2_grpc
except ImportError as e:
    sys.exit(
        f"tunefleet_client: {e}: generate the stubs first "
        "(examples/python/generate.sh OUT_DIR) and set PYTHONPATH=OUT_DIR")

PROG = "tunefleet_client"

# Deadline of each unary call, s. WatchJob has its own (--timeout-s).
UNARY_DEADLINE_S = 30


class ClientError(Exception):
    """A failure to report on one line and exit 1 with."""


def fail(message):
    raise ClientError(message)


def rpc(name, method, request, **kwargs):
    """Calls one unary RPC; a gRPC error becomes a ClientError naming it."""
    try:
        return method(request, **kwargs)
    except grpc.RpcError as e:
        # A failed call is also a grpc.Call with its status code and the
        # server's message (INVALID_ARGUMENT messages start with the field).
        fail(f"{name} failed: {e.code().name}: {e.details()}")


# ---------------------------------------------------------------------------
# Connecting


def read_token(path):
    try:
        with open(path, encoding="utf-8") as f:
            token = f.read().strip()
    except OSError as e:
        fail(f"cannot read the token file: {e}")
    if not token:
        fail(f"the token file {path} is empty")
    return token


def open_channel(server, ca_file):
    """A channel to HOST:PORT: TLS verified against ca_file, else plaintext.

    The server refuses plaintext except on a loopback address."""
    if not ca_file:
        return grpc.insecure_channel(server)
    try:
        with open(ca_file, "rb") as f:
            root = f.read()
    except OSError as e:
        fail(f"cannot read --ca: {e}")
    return grpc.secure_channel(server,
                               grpc.ssl_channel_credentials(root_certificates=root))


class Client:
    """TuningService with the bearer token added to every call."""

    def __init__(self, channel, token):
        self.stub = tuning_pb2_grpc.TuningServiceStub(channel)
        # The token goes as call metadata, the same on TLS and plaintext
        # channels (grpc.access_token_call_credentials would need TLS).
        self.metadata = (("authorization", f"Bearer {token}"),)

    def call(self, name, request, timeout=UNARY_DEADLINE_S):
        return rpc(name, getattr(self.stub, name), request,
                   metadata=self.metadata, timeout=timeout)

    def watch(self, job_id, timeout):
        """Yields the job's JobProgress messages until the stream ends."""
        stream = self.stub.WatchJob(tuning_pb2.WatchJobRequest(job_id=job_id),
                                    metadata=self.metadata, timeout=timeout)
        try:
            yield from stream
        except grpc.RpcError as e:
            fail(f"WatchJob failed: {e.code().name}: {e.details()}")


# ---------------------------------------------------------------------------
# Formatting


def enum_name(enum_type, value, prefix=""):
    """JOB_STATE_DONE -> "done": the way the CLI and the store spell them."""
    name = enum_type.Name(value)
    return name[len(prefix):].lower() if name.startswith(prefix) else name


def job_state(state):
    return enum_name(tuning_pb2.JobState, state, "JOB_STATE_")


def config_text(config):
    return ",".join(f"{k.name}={k.value}" for k in config.knobs)


def progress_line(p):
    line = (f"job {p.job_id}: {job_state(p.state)}, "
            f"{p.trials_done}/{p.trials_total} trials")
    if p.HasField("best"):
        line += (f", best {p.best.time_ns / 1e3:.2f} us "
                 f"({p.best.gflops:.2f} GFLOP/s, {config_text(p.best.config)})")
    if p.errors:
        line += ", errors " + ",".join(f"{k}={v}" for k, v in sorted(p.errors.items()))
    if p.waiting_reason:
        line += f" [waiting: {p.waiting_reason}]"
    return line


def record_line(r):
    error = common_pb2.Measurement.Error.Name(r.error)
    line = f"  trial {r.trial_id:>4}  {error:<14}"
    if r.error == common_pb2.Measurement.OK:
        line += f" {r.time_ns / 1e3:9.2f} us {r.gflops:8.2f} GFLOP/s"
    else:
        line += f" {'':>9}    {'':>8}         "
    line += f"  compile {r.compile_ms:7.1f} ms  agent {r.agent_name or '-'}"
    line += f"  {config_text(r.config)}"
    if r.error_message:
        line += f"  ({r.error_message.splitlines()[0][:80]})"
    return line


def to_dict(message):
    """A message as a JSON-ready dict: field names as in the .proto, fields
    at their default kept (trials_done 0 is there); int64 values come out as
    strings, enums as their names."""
    try:
        return json_format.MessageToDict(message, preserving_proto_field_name=True,
                                         including_default_value_fields=True)
    except TypeError:  # protobuf >= 26 renamed the option
        return json_format.MessageToDict(message, preserving_proto_field_name=True,
                                         always_print_fields_with_no_presence=True)


# ---------------------------------------------------------------------------
# The steps


def list_devices(client, want_key, wait_s):
    """ListDevices; with want_key, polls until an agent of it is connected."""
    deadline = time.monotonic() + wait_s
    said_waiting = False
    while True:
        devices = client.call("ListDevices", tuning_pb2.ListDevicesRequest()).devices
        connected = {d.device_key for d in devices if d.connected_agents > 0}
        if not want_key or want_key in connected or time.monotonic() >= deadline:
            break
        if not said_waiting:
            print(f"waiting up to {wait_s:g} s for an agent of device key "
                  f"'{want_key}' to connect", flush=True)
            said_waiting = True
        time.sleep(0.2)
    print(f"{len(devices)} device key(s):")
    for d in devices:
        print(f"  {d.device_key}: {d.device.device_name} ({d.device.device_type}), "
              f"{d.connected_agents} agent(s) connected"
              + (f": {', '.join(d.agent_names)}" if d.agent_names else ""))
    if want_key and want_key not in connected:
        fail(f"no agent of device key '{want_key}' connected within {wait_s:g} s")
    return devices


def parse_shape(text):
    """"M=64,N=64,K=64" -> [Workload.Dim], in the order given."""
    dims = []
    for part in text.split(","):
        name, sep, value = part.partition("=")
        if not sep or not name.strip():
            fail(f"--shape: expected NAME=VALUE,..., got '{part}'")
        try:
            dims.append(common_pb2.Workload.Dim(name=name.strip(),
                                                value=int(value)))
        except ValueError:
            fail(f"--shape: {name.strip()} is not an integer: '{value}'")
    return dims


def submit_job(client, args):
    request = tuning_pb2.SubmitJobRequest(
        workload=common_pb2.Workload(
            op=args.op, dims=parse_shape(args.shape),
            dtype=common_pb2.Dtype.Value("DTYPE_" + args.dtype.upper())),
        template_name=args.template,        # empty: the op's default
        device_key=args.device_key,         # empty: the only connected key
        strategy=tuning_pb2.Strategy.Value("STRATEGY_" + args.strategy.upper()),
        trials=args.trials,
        seed=args.seed,
    )
    response = client.call("SubmitJob", request)
    print(f"submitted job {response.job_id}: {args.op} {args.shape} {args.dtype}, "
          f"{args.trials} trials on device key '{response.device_key}' "
          f"({response.space_size} valid configs)", flush=True)
    return response


def watch_job(client, job_id, timeout_s):
    """Prints every progress message; returns them all (the last is final)."""
    messages = []
    for progress in client.watch(job_id, timeout_s):
        messages.append(progress)
        print(progress_line(progress), flush=True)
    if not messages:
        fail(f"WatchJob of job {job_id} ended without a message")
    final = messages[-1]
    if final.state not in (tuning_pb2.JOB_STATE_DONE, tuning_pb2.JOB_STATE_FAILED,
                           tuning_pb2.JOB_STATE_CANCELLED):
        fail(f"WatchJob of job {job_id} ended while the job was "
             f"{job_state(final.state)}")
    return messages


def query_records(client, job_id, page_size):
    """All of the job's records, page_size at a time; returns (records, pages)
    where pages lists the trial ids of each page."""
    records, pages = [], []
    token = ""
    while True:
        response = client.call("QueryRecords", tuning_pb2.QueryRecordsRequest(
            job_id=job_id, page_size=page_size, page_token=token))
        pages.append([r.trial_id for r in response.records])
        records.extend(response.records)
        print(f"page {len(pages)}: {len(response.records)} record(s)"
              + ("" if response.next_page_token else " (last page)"))
        for r in response.records:
            print(record_line(r))
        token = response.next_page_token
        if not token:  # empty: that was the last page
            return records, pages
        if len(pages) > 100000:
            fail("QueryRecords: the server keeps sending next_page_token")


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--server", default="127.0.0.1:7878",
                        help="tunefleet-server address, HOST:PORT")
    parser.add_argument("--token-file", default=os.environ.get("TUNEFLEET_TOKEN_FILE"),
                        help="file holding an access token of role tuner "
                             "(tunefleet token add); default $TUNEFLEET_TOKEN_FILE")
    parser.add_argument("--ca", default=os.environ.get("TUNEFLEET_CA"),
                        help="TLS: verify the server against this CA (PEM); "
                             "without it the connection is plaintext")
    parser.add_argument("--op", default="gemm")
    parser.add_argument("--shape", default="M=64,N=64,K=64",
                        help="the op's dims, NAME=VALUE,...")
    parser.add_argument("--dtype", default="fp32", choices=["fp32", "fp16"])
    parser.add_argument("--template", default="",
                        help="template name (default: the op's default)")
    parser.add_argument("--device-key", default="",
                        help="device key to tune on (default: the only "
                             "connected one); waits --wait-s for its agent")
    parser.add_argument("--strategy", default="random",
                        choices=["grid", "random", "sa", "ga", "xgb"])
    parser.add_argument("--trials", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--page-size", type=int, default=3,
                        help="records per QueryRecords page")
    parser.add_argument("--wait-s", type=float, default=30,
                        help="how long to wait for an agent of --device-key")
    parser.add_argument("--timeout-s", type=float, default=600,
                        help="deadline of WatchJob, s")
    parser.add_argument("--json", metavar="FILE",
                        help="also write what was received to FILE as JSON")
    args = parser.parse_args(argv)
    if not args.token_file:
        parser.error("--token-file is required (or set TUNEFLEET_TOKEN_FILE)")

    try:
        with open_channel(args.server, args.ca) as channel:
            client = Client(channel, read_token(args.token_file))
            devices = list_devices(client, args.device_key, args.wait_s)
            submitted = submit_job(client, args)
            watched = watch_job(client, submitted.job_id, args.timeout_s)
            job = client.call("GetJob", tuning_pb2.GetJobRequest(job_id=submitted.job_id))
            print(f"GetJob: {progress_line(job)}")
            records, pages = query_records(client, submitted.job_id, args.page_size)
            print(f"{len(records)} record(s) in {len(pages)} page(s) of at most "
                  f"{args.page_size}")
    except ClientError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1

    if args.json:
        summary = {
            "server": args.server,
            "devices": [to_dict(d) for d in devices],
            "trials_requested": args.trials,
            "page_size": args.page_size,
            "submit": to_dict(submitted),
            "watch": [to_dict(p) for p in watched],
            "get_job": to_dict(job),
            "pages": [[str(i) for i in page] for page in pages],
            "records": [to_dict(r) for r in records],
        }
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=1)

    final = watched[-1]
    if final.state != tuning_pb2.JOB_STATE_DONE:
        print(f"{PROG}: job {final.job_id} ended {job_state(final.state)}"
              + (f": {final.message}" if final.message else ""), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
