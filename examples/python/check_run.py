#!/usr/bin/env python3
"""Checks what tunefleet_client.py --json wrote against the server (run by
run_test.sh): exit 0 when every check passes, else 1 with one line per
failed check.

  check_run.py SUMMARY_JSON --server HOST:PORT --token-file FILE
               --device-key KEY --agent-name NAME
"""

import argparse
import json
import sys

import grpc

from tunefleet.v1 import tuning_pb2, tuning_pb2_grpc
from tunefleet_client import to_dict  # the same conversion as the summary's

failures = []


def check(ok, message):
    print(("ok    " if ok else "FAIL  ") + message)
    if not ok:
        failures.append(message)
    return ok


def differing_fields(a, b):
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("summary")
    parser.add_argument("--server", required=True)
    parser.add_argument("--token-file", required=True)
    parser.add_argument("--device-key", required=True)
    parser.add_argument("--agent-name", required=True)
    args = parser.parse_args()
    with open(args.summary, encoding="utf-8") as f:
        s = json.load(f)

    # ListDevices: the agent's key, with that agent connected.
    devices = {d["device_key"]: d for d in s["devices"]}
    check(args.device_key in devices,
          f"ListDevices has device key '{args.device_key}' (got {sorted(devices)})")
    d = devices.get(args.device_key, {})
    check(d.get("connected_agents") == 1 and d.get("agent_names") == [args.agent_name],
          f"ListDevices: one agent '{args.agent_name}' connected "
          f"(got {d.get('connected_agents')}, {d.get('agent_names')})")
    check(bool(d.get("device", {}).get("device_name")),
          "ListDevices: the device info has a device_name")

    # SubmitJob and WatchJob: the job ran on that key and ended done with
    # every trial asked for.
    job_id = int(s["submit"]["job_id"])
    asked = s["trials_requested"]
    check(job_id > 0, f"SubmitJob returned job id {job_id}")
    check(s["submit"]["device_key"] == args.device_key,
          f"SubmitJob: device key '{s['submit']['device_key']}'")
    watched = s["watch"]
    final = watched[-1]
    check(len(watched) >= 2, f"WatchJob streamed {len(watched)} messages (>= 2)")
    check(all(int(p["job_id"]) == job_id for p in watched),
          "WatchJob: every message is of the job")
    done = [p["trials_done"] for p in watched]
    check(done == sorted(done), f"WatchJob: trials_done never decreases {done}")
    check(final["state"] == "JOB_STATE_DONE",
          f"the job ended done (got {final['state']}: {final.get('message')!r})")
    check(final["trials_done"] == asked and final["trials_total"] == asked,
          f"trials_done == trials_total == {asked} "
          f"(got {final['trials_done']}/{final['trials_total']})")
    check(bool(final.get("best")) and final["best"]["error"] == "OK",
          "the job has a best record that is OK")

    # GetJob: the same as the last progress WatchJob sent.
    diff = differing_fields(final, s["get_job"])
    check(not diff, f"GetJob matches the last watched progress"
                    + (f" (differs in {diff})" if diff else ""))

    # QueryRecords in pages: several pages of page_size, exactly
    # trials_done records, distinct trial ids, all of this job.
    page_size = s["page_size"]
    pages = [[int(i) for i in page] for page in s["pages"]]
    records = s["records"]
    ids = [int(r["trial_id"]) for r in records]
    expected_pages = -(-final["trials_done"] // page_size)  # ceil
    check(len(pages) == expected_pages and len(pages) > 1,
          f"{len(pages)} pages of {page_size} for {final['trials_done']} records "
          f"(expected {expected_pages}, more than one): {pages}")
    check(all(len(p) == page_size for p in pages[:-1]) and 0 < len(pages[-1]) <= page_size,
          f"every page but the last holds {page_size} records")
    check(len(records) == final["trials_done"],
          f"the pages hold trials_done = {final['trials_done']} records (got {len(records)})")
    check(len(set(ids)) == len(ids), f"trial ids are distinct: {ids}")
    check(ids == sorted(ids), "records come by trial id")
    check(all(int(r["job_id"]) == job_id for r in records), "every record is of the job")
    # The record fields added with agent names and times.
    check(all(r["agent_name"] == args.agent_name for r in records),
          f"every record names agent '{args.agent_name}' "
          f"(got {sorted({r['agent_name'] for r in records})})")
    check(all(0 < int(r["created_unix_ms"]) <= int(r["measured_unix_ms"])
              for r in records),
          "every record has 0 < created_unix_ms <= measured_unix_ms")
    check(all((r["error"] == "OK") == (r["error_message"] == "") for r in records),
          "error_message is empty exactly when the error is OK")

    # The same records in one unpaged call, and GetJob once more.
    with open(args.token_file, encoding="utf-8") as f:
        metadata = (("authorization", "Bearer " + f.read().strip()),)
    with grpc.insecure_channel(args.server) as channel:
        stub = tuning_pb2_grpc.TuningServiceStub(channel)
        unpaged = stub.QueryRecords(tuning_pb2.QueryRecordsRequest(job_id=job_id),
                                    metadata=metadata, timeout=30)
        again = stub.GetJob(tuning_pb2.GetJobRequest(job_id=job_id),
                            metadata=metadata, timeout=30)
    check(unpaged.next_page_token == "", "one unpaged QueryRecords: no next page")
    check([to_dict(r) for r in unpaged.records] == records,
          f"the paged records equal one unpaged query "
          f"({len(unpaged.records)} records: "
          f"{[r.trial_id for r in unpaged.records]})")
    diff = differing_fields(final, to_dict(again))
    check(not diff, "a second GetJob still matches"
                    + (f" (differs in {diff})" if diff else ""))

    if failures:
        print(f"check_run.py: {len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("check_run.py: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
